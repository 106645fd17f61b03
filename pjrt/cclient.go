package pjrt

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
)

// NewClient implements backend.Plugin.
func (p *cPlugin) NewClient(options []backend.NamedValue) (backend.Client, error) {
	var pin runtime.Pinner
	nv, err := makeNamedValues(options, &pin)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	args := &capi.PJRT_Client_Create_Args{
		StructSize:    capi.PJRT_Client_Create_Args_STRUCT_SIZE,
		CreateOptions: nv.ptr(),
		NumOptions:    uint64(len(nv.vals)),
	}
	err = p.call(capi.SlotPJRT_Client_Create, unsafe.Pointer(args), &pin)
	runtime.KeepAlive(nv)
	if err != nil {
		return nil, err
	}
	c := &cClient{p: p, h: args.Client}
	if err := c.load(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// cClient is a PJRT_Client. Devices and memories are read once at creation.
type cClient struct {
	p           *cPlugin
	h           uintptr
	platform    string
	version     string
	process     int
	devices     []*cDevice
	addressable []*cDevice
	memories    []*cMemory
	// handles guards devByHandle and memByHandle: a device or memory
	// handle met after load (an executable's devices, a device's
	// memories) is added while other goroutines look handles up.
	handles     sync.RWMutex
	devByHandle map[uintptr]*cDevice
	memByHandle map[uintptr]*cMemory
	closeOnce   sync.Once
	dmaMu       sync.Mutex
	dma         map[uintptr]dmaMapping // DmaMap'ed host memory, pinned
}

func (c *cClient) load() error {
	{
		a := &capi.PJRT_Client_PlatformName_Args{StructSize: capi.PJRT_Client_PlatformName_Args_STRUCT_SIZE, Client: c.h}
		if err := c.p.call(capi.SlotPJRT_Client_PlatformName, unsafe.Pointer(a), nil); err != nil {
			return err
		}
		c.platform = goStringN(a.PlatformName, int(a.PlatformNameSize))
	}
	{
		a := &capi.PJRT_Client_PlatformVersion_Args{StructSize: capi.PJRT_Client_PlatformVersion_Args_STRUCT_SIZE, Client: c.h}
		if err := c.p.call(capi.SlotPJRT_Client_PlatformVersion, unsafe.Pointer(a), nil); err != nil {
			return err
		}
		c.version = goStringN(a.PlatformVersion, int(a.PlatformVersionSize))
	}
	{
		a := &capi.PJRT_Client_ProcessIndex_Args{StructSize: capi.PJRT_Client_ProcessIndex_Args_STRUCT_SIZE, Client: c.h}
		if err := c.p.call(capi.SlotPJRT_Client_ProcessIndex, unsafe.Pointer(a), nil); err != nil {
			return err
		}
		c.process = int(a.ProcessIndex)
	}
	c.devByHandle = map[uintptr]*cDevice{}
	c.memByHandle = map[uintptr]*cMemory{}
	a := &capi.PJRT_Client_Devices_Args{StructSize: capi.PJRT_Client_Devices_Args_STRUCT_SIZE, Client: c.h}
	if err := c.p.call(capi.SlotPJRT_Client_Devices, unsafe.Pointer(a), nil); err != nil {
		return err
	}
	for _, h := range ptrSlice(a.Devices, int(a.NumDevices)) {
		d, err := c.device(h)
		if err != nil {
			return err
		}
		c.devices = append(c.devices, d)
	}
	ad := &capi.PJRT_Client_AddressableDevices_Args{StructSize: capi.PJRT_Client_AddressableDevices_Args_STRUCT_SIZE, Client: c.h}
	if err := c.p.call(capi.SlotPJRT_Client_AddressableDevices, unsafe.Pointer(ad), nil); err != nil {
		return err
	}
	for _, h := range ptrSlice(ad.AddressableDevices, int(ad.NumAddressableDevices)) {
		d, err := c.device(h)
		if err != nil {
			return err
		}
		c.addressable = append(c.addressable, d)
	}
	if c.p.slots[capi.SlotPJRT_Client_AddressableMemories] != 0 {
		am := &capi.PJRT_Client_AddressableMemories_Args{StructSize: capi.PJRT_Client_AddressableMemories_Args_STRUCT_SIZE, Client: c.h}
		if err := c.p.call(capi.SlotPJRT_Client_AddressableMemories, unsafe.Pointer(am), nil); err != nil {
			return err
		}
		for _, h := range ptrSlice(am.AddressableMemories, int(am.NumAddressableMemories)) {
			m, err := c.memory(h)
			if err != nil {
				return err
			}
			c.memories = append(c.memories, m)
		}
	}
	// Per-device memories, now that every memory is known.
	for _, d := range c.addressable {
		if err := d.loadMemories(); err != nil {
			return err
		}
	}
	return nil
}

// ptrSlice copies a C array of n pointers.
func ptrSlice(arr uintptr, n int) []uintptr {
	if arr == 0 || n <= 0 {
		return nil
	}
	return append([]uintptr(nil), unsafe.Slice((*uintptr)(cptr(arr)), n)...)
}

// device returns the device of handle h, loading it when first met.
func (c *cClient) device(h uintptr) (*cDevice, error) {
	if d := c.deviceOf(h); d != nil {
		return d, nil
	}
	d := &cDevice{c: c, h: h}
	if err := d.load(); err != nil {
		return nil, err
	}
	c.handles.Lock()
	defer c.handles.Unlock()
	if old := c.devByHandle[h]; old != nil {
		return old, nil // another goroutine loaded it meanwhile
	}
	c.devByHandle[h] = d
	return d, nil
}

// deviceOf returns the device of handle h already met, or nil.
func (c *cClient) deviceOf(h uintptr) *cDevice {
	c.handles.RLock()
	defer c.handles.RUnlock()
	return c.devByHandle[h]
}

// memory returns the memory of handle h, loading it when first met.
func (c *cClient) memory(h uintptr) (*cMemory, error) {
	if m := c.memoryOf(h); m != nil {
		return m, nil
	}
	m := &cMemory{c: c, h: h}
	if err := m.load(); err != nil {
		return nil, err
	}
	c.handles.Lock()
	defer c.handles.Unlock()
	if old := c.memByHandle[h]; old != nil {
		return old, nil
	}
	c.memByHandle[h] = m
	return m, nil
}

// memoryOf returns the memory of handle h already met, or nil.
func (c *cClient) memoryOf(h uintptr) *cMemory {
	c.handles.RLock()
	defer c.handles.RUnlock()
	return c.memByHandle[h]
}

func (c *cClient) PlatformName() string    { return c.platform }
func (c *cClient) PlatformVersion() string { return c.version }
func (c *cClient) ProcessIndex() int       { return c.process }

func (c *cClient) Devices() []backend.Device {
	out := make([]backend.Device, len(c.devices))
	for i, d := range c.devices {
		out[i] = d
	}
	return out
}

func (c *cClient) AddressableDevices() []backend.Device {
	out := make([]backend.Device, len(c.addressable))
	for i, d := range c.addressable {
		out[i] = d
	}
	return out
}

func (c *cClient) AddressableMemories() []backend.Memory {
	out := make([]backend.Memory, len(c.memories))
	for i, m := range c.memories {
		out[i] = m
	}
	return out
}

func (c *cClient) LookupDevice(id int) (backend.Device, error) {
	a := &capi.PJRT_Client_LookupDevice_Args{StructSize: capi.PJRT_Client_LookupDevice_Args_STRUCT_SIZE, Client: c.h, Id: int32(id)}
	if err := c.p.call(capi.SlotPJRT_Client_LookupDevice, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	if d := c.deviceOf(a.Device); d != nil {
		return d, nil
	}
	return nil, errorf(NotFound, "PJRT_Client_LookupDevice", "no device with id %d", id)
}

func (c *cClient) DefaultDeviceAssignment(replicas, partitions int) ([]int, error) {
	n := replicas * partitions
	out := make([]int32, n+1)
	a := &capi.PJRT_Client_DefaultDeviceAssignment_Args{
		StructSize:            capi.PJRT_Client_DefaultDeviceAssignment_Args_STRUCT_SIZE,
		Client:                c.h,
		NumReplicas:           int32(replicas),
		NumPartitions:         int32(partitions),
		DefaultAssignmentSize: uint64(n),
		DefaultAssignment:     uintptr(unsafe.Pointer(&out[0])),
	}
	var pin runtime.Pinner
	pin.Pin(&out[0])
	if err := c.p.call(capi.SlotPJRT_Client_DefaultDeviceAssignment, unsafe.Pointer(a), &pin); err != nil {
		return nil, err
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = int(out[i])
	}
	return ids, nil
}

func (c *cClient) Close() error {
	var err error
	c.closeOnce.Do(func() {
		if c.h == 0 {
			return
		}
		c.unmapAll()
		a := &capi.PJRT_Client_Destroy_Args{StructSize: capi.PJRT_Client_Destroy_Args_STRUCT_SIZE, Client: c.h}
		err = c.p.call(capi.SlotPJRT_Client_Destroy, unsafe.Pointer(a), nil)
		c.h = 0
	})
	return err
}

// cDevice is a PJRT_Device with its description read once.
type cDevice struct {
	c          *cClient
	h, desc    uintptr
	id         int
	process    int
	kind       string
	debug      string
	str        string
	attrs      []backend.NamedValue
	hwID       int
	addr       bool
	memories   []*cMemory
	defaultMem *cMemory
}

func (d *cDevice) load() error {
	p := d.c.p
	g := &capi.PJRT_Device_GetDescription_Args{StructSize: capi.PJRT_Device_GetDescription_Args_STRUCT_SIZE, Device: d.h}
	if err := p.call(capi.SlotPJRT_Device_GetDescription, unsafe.Pointer(g), nil); err != nil {
		return err
	}
	d.desc = g.DeviceDescription
	id := &capi.PJRT_DeviceDescription_Id_Args{StructSize: capi.PJRT_DeviceDescription_Id_Args_STRUCT_SIZE, DeviceDescription: d.desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_Id, unsafe.Pointer(id), nil); err != nil {
		return err
	}
	d.id = int(id.Id)
	pi := &capi.PJRT_DeviceDescription_ProcessIndex_Args{StructSize: capi.PJRT_DeviceDescription_ProcessIndex_Args_STRUCT_SIZE, DeviceDescription: d.desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_ProcessIndex, unsafe.Pointer(pi), nil); err != nil {
		return err
	}
	d.process = int(pi.ProcessIndex)
	k := &capi.PJRT_DeviceDescription_Kind_Args{StructSize: capi.PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE, DeviceDescription: d.desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_Kind, unsafe.Pointer(k), nil); err != nil {
		return err
	}
	d.kind = goStringN(k.DeviceKind, int(k.DeviceKindSize))
	ds := &capi.PJRT_DeviceDescription_DebugString_Args{StructSize: capi.PJRT_DeviceDescription_DebugString_Args_STRUCT_SIZE, DeviceDescription: d.desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_DebugString, unsafe.Pointer(ds), nil); err == nil {
		d.debug = goStringN(ds.DebugString, int(ds.DebugStringSize))
	}
	ts := &capi.PJRT_DeviceDescription_ToString_Args{StructSize: capi.PJRT_DeviceDescription_ToString_Args_STRUCT_SIZE, DeviceDescription: d.desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_ToString, unsafe.Pointer(ts), nil); err == nil {
		d.str = goStringN(ts.ToString, int(ts.ToStringSize))
	}
	at := &capi.PJRT_DeviceDescription_Attributes_Args{StructSize: capi.PJRT_DeviceDescription_Attributes_Args_STRUCT_SIZE, DeviceDescription: d.desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_Attributes, unsafe.Pointer(at), nil); err == nil {
		d.attrs = readNamedValues(at.Attributes, int(at.NumAttributes))
	}
	ia := &capi.PJRT_Device_IsAddressable_Args{StructSize: capi.PJRT_Device_IsAddressable_Args_STRUCT_SIZE, Device: d.h}
	if err := p.call(capi.SlotPJRT_Device_IsAddressable, unsafe.Pointer(ia), nil); err != nil {
		return err
	}
	d.addr = ia.IsAddressable
	d.hwID = -1
	if d.addr {
		hw := &capi.PJRT_Device_LocalHardwareId_Args{StructSize: capi.PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE, Device: d.h}
		if err := p.call(capi.SlotPJRT_Device_LocalHardwareId, unsafe.Pointer(hw), nil); err == nil {
			d.hwID = int(hw.LocalHardwareId)
		}
	}
	return nil
}

func (d *cDevice) loadMemories() error {
	p := d.c.p
	if p.slots[capi.SlotPJRT_Device_AddressableMemories] == 0 {
		return nil
	}
	am := &capi.PJRT_Device_AddressableMemories_Args{StructSize: capi.PJRT_Device_AddressableMemories_Args_STRUCT_SIZE, Device: d.h}
	if err := p.call(capi.SlotPJRT_Device_AddressableMemories, unsafe.Pointer(am), nil); err != nil {
		return err
	}
	for _, h := range ptrSlice(am.Memories, int(am.NumMemories)) {
		m, err := d.c.memory(h)
		if err != nil {
			return err
		}
		d.memories = append(d.memories, m)
	}
	if p.slots[capi.SlotPJRT_Device_DefaultMemory] != 0 {
		dm := &capi.PJRT_Device_DefaultMemory_Args{StructSize: capi.PJRT_Device_DefaultMemory_Args_STRUCT_SIZE, Device: d.h}
		if err := p.call(capi.SlotPJRT_Device_DefaultMemory, unsafe.Pointer(dm), nil); err == nil && dm.Memory != 0 {
			m, err := d.c.memory(dm.Memory)
			if err != nil {
				return err
			}
			d.defaultMem = m
		}
	}
	return nil
}

func (d *cDevice) ID() int                          { return d.id }
func (d *cDevice) ProcessIndex() int                { return d.process }
func (d *cDevice) Kind() string                     { return d.kind }
func (d *cDevice) DebugString() string              { return d.debug }
func (d *cDevice) String() string                   { return d.str }
func (d *cDevice) Attributes() []backend.NamedValue { return d.attrs }
func (d *cDevice) IsAddressable() bool              { return d.addr }
func (d *cDevice) LocalHardwareID() int             { return d.hwID }

func (d *cDevice) Memories() []backend.Memory {
	out := make([]backend.Memory, len(d.memories))
	for i, m := range d.memories {
		out[i] = m
	}
	return out
}

func (d *cDevice) DefaultMemory() (backend.Memory, error) {
	if d.defaultMem == nil {
		return nil, errorf(Unimplemented, "PJRT_Device_DefaultMemory", "device %d has no default memory", d.id)
	}
	return d.defaultMem, nil
}

// cMemory is a PJRT_Memory read once.
type cMemory struct {
	c       *cClient
	h       uintptr
	id      int
	kind    string
	kindID  int
	debug   string
	str     string
	devices []uintptr
}

func (m *cMemory) load() error {
	p := m.c.p
	id := &capi.PJRT_Memory_Id_Args{StructSize: capi.PJRT_Memory_Id_Args_STRUCT_SIZE, Memory: m.h}
	if err := p.call(capi.SlotPJRT_Memory_Id, unsafe.Pointer(id), nil); err != nil {
		return err
	}
	m.id = int(id.Id)
	k := &capi.PJRT_Memory_Kind_Args{StructSize: capi.PJRT_Memory_Kind_Args_STRUCT_SIZE, Memory: m.h}
	if err := p.call(capi.SlotPJRT_Memory_Kind, unsafe.Pointer(k), nil); err != nil {
		return err
	}
	m.kind = goStringN(k.Kind, int(k.KindSize))
	m.kindID = -1
	if p.slots[capi.SlotPJRT_Memory_Kind_Id] != 0 {
		ki := &capi.PJRT_Memory_Kind_Id_Args{StructSize: capi.PJRT_Memory_Kind_Id_Args_STRUCT_SIZE, Memory: m.h}
		if err := p.call(capi.SlotPJRT_Memory_Kind_Id, unsafe.Pointer(ki), nil); err == nil {
			m.kindID = int(ki.KindId)
		}
	}
	ds := &capi.PJRT_Memory_DebugString_Args{StructSize: capi.PJRT_Memory_DebugString_Args_STRUCT_SIZE, Memory: m.h}
	if err := p.call(capi.SlotPJRT_Memory_DebugString, unsafe.Pointer(ds), nil); err == nil {
		m.debug = goStringN(ds.DebugString, int(ds.DebugStringSize))
	}
	ts := &capi.PJRT_Memory_ToString_Args{StructSize: capi.PJRT_Memory_ToString_Args_STRUCT_SIZE, Memory: m.h}
	if err := p.call(capi.SlotPJRT_Memory_ToString, unsafe.Pointer(ts), nil); err == nil {
		m.str = goStringN(ts.ToString, int(ts.ToStringSize))
	}
	ab := &capi.PJRT_Memory_AddressableByDevices_Args{StructSize: capi.PJRT_Memory_AddressableByDevices_Args_STRUCT_SIZE, Memory: m.h}
	if err := p.call(capi.SlotPJRT_Memory_AddressableByDevices, unsafe.Pointer(ab), nil); err == nil {
		m.devices = ptrSlice(ab.Devices, int(ab.NumDevices))
	}
	return nil
}

func (m *cMemory) ID() int             { return m.id }
func (m *cMemory) Kind() string        { return m.kind }
func (m *cMemory) KindID() int         { return m.kindID }
func (m *cMemory) DebugString() string { return m.debug }
func (m *cMemory) String() string      { return m.str }

func (m *cMemory) Devices() []backend.Device {
	var out []backend.Device
	for _, h := range m.devices {
		if d := m.c.deviceOf(h); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func (c *cClient) String() string { return fmt.Sprintf("%s client (%s)", c.platform, c.p.path) }

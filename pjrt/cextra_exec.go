package pjrt

import (
	"runtime"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
)

// execDetails implements backend.ExecutableDetails, and the queries
// backend.Executable and backend.CompiledProgram share, for a
// PJRT_Executable handle (of a loaded executable or of a PJRT_Compile
// result).
type execDetails struct {
	p    *cPlugin
	exec uintptr
}

func (d execDetails) Name() (string, error) {
	a := &capi.PJRT_Executable_Name_Args{StructSize: capi.PJRT_Executable_Name_Args_STRUCT_SIZE, Executable: d.exec}
	if err := d.p.call(capi.SlotPJRT_Executable_Name, unsafe.Pointer(a), nil); err != nil {
		return "", err
	}
	return goStringN(a.ExecutableName, int(a.ExecutableNameSize)), nil
}

func (d execDetails) NumReplicas() (int, error) {
	a := &capi.PJRT_Executable_NumReplicas_Args{StructSize: capi.PJRT_Executable_NumReplicas_Args_STRUCT_SIZE, Executable: d.exec}
	err := d.p.call(capi.SlotPJRT_Executable_NumReplicas, unsafe.Pointer(a), nil)
	return int(a.NumReplicas), err
}

func (d execDetails) NumPartitions() (int, error) {
	a := &capi.PJRT_Executable_NumPartitions_Args{StructSize: capi.PJRT_Executable_NumPartitions_Args_STRUCT_SIZE, Executable: d.exec}
	err := d.p.call(capi.SlotPJRT_Executable_NumPartitions, unsafe.Pointer(a), nil)
	return int(a.NumPartitions), err
}

func (d execDetails) Serialize() ([]byte, error) {
	a := &capi.PJRT_Executable_Serialize_Args{StructSize: capi.PJRT_Executable_Serialize_Args_STRUCT_SIZE, Executable: d.exec}
	if err := d.p.call(capi.SlotPJRT_Executable_Serialize, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	out := []byte(goStringN(a.SerializedBytes, int(a.SerializedBytesSize)))
	if a.SerializedExecutableDeleter != 0 && a.SerializedExecutable != 0 {
		callVoid(a.SerializedExecutableDeleter, a.SerializedExecutable)
	}
	return out, nil
}

func (d execDetails) SizeOfGeneratedCode() (int64, error) {
	a := &capi.PJRT_Executable_SizeOfGeneratedCodeInBytes_Args{StructSize: capi.PJRT_Executable_SizeOfGeneratedCodeInBytes_Args_STRUCT_SIZE, Executable: d.exec}
	if err := d.p.call(capi.SlotPJRT_Executable_SizeOfGeneratedCodeInBytes, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return a.SizeInBytes, nil
}

func (d execDetails) CostAnalysis() ([]backend.NamedValue, error) {
	a := &capi.PJRT_Executable_GetCostAnalysis_Args{StructSize: capi.PJRT_Executable_GetCostAnalysis_Args_STRUCT_SIZE, Executable: d.exec}
	if err := d.p.call(capi.SlotPJRT_Executable_GetCostAnalysis, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return readNamedValues(a.Properties, int(a.NumProperties)), nil
}

func (d execDetails) CompiledMemoryStats() (backend.CompiledMemoryStats, error) {
	a := &capi.PJRT_Executable_GetCompiledMemoryStats_Args{StructSize: capi.PJRT_Executable_GetCompiledMemoryStats_Args_STRUCT_SIZE, Executable: d.exec}
	if err := d.p.call(capi.SlotPJRT_Executable_GetCompiledMemoryStats, unsafe.Pointer(a), nil); err != nil {
		return backend.CompiledMemoryStats{}, err
	}
	return backend.CompiledMemoryStats{
		GeneratedCodeSizeInBytes: a.GeneratedCodeSizeInBytes, ArgumentSizeInBytes: a.ArgumentSizeInBytes,
		OutputSizeInBytes: a.OutputSizeInBytes, AliasSizeInBytes: a.AliasSizeInBytes, TempSizeInBytes: a.TempSizeInBytes,
		HostGeneratedCodeSizeInBytes: a.HostGeneratedCodeSizeInBytes, HostArgumentSizeInBytes: a.HostArgumentSizeInBytes,
		HostOutputSizeInBytes: a.HostOutputSizeInBytes, HostAliasSizeInBytes: a.HostAliasSizeInBytes,
		HostTempSizeInBytes: a.HostTempSizeInBytes, PeakMemoryInBytes: a.PeakMemoryInBytes,
		TotalSizeInBytes: a.TotalSizeInBytes, TotalAllocationBytes: a.TotalAllocationBytes,
		IndefiniteAllocations: a.IndefiniteAllocations, PeakUnpaddedHeapBytes: a.PeakUnpaddedHeapBytes,
	}, nil
}

// OptimizedProgram uses the two-call protocol: the first call reports the
// size, the second fills a buffer of that size.
func (d execDetails) OptimizedProgram() ([]byte, string, error) {
	prog := &capi.PJRT_Program{StructSize: capi.PJRT_Program_STRUCT_SIZE}
	var pin runtime.Pinner
	pin.Pin(prog)
	a := &capi.PJRT_Executable_OptimizedProgram_Args{StructSize: capi.PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE, Executable: d.exec, Program: uintptr(unsafe.Pointer(prog))}
	if err := d.p.call(capi.SlotPJRT_Executable_OptimizedProgram, unsafe.Pointer(a), &pin); err != nil {
		return nil, "", err
	}
	code := make([]byte, prog.CodeSize+1)
	pin.Pin(prog)
	pin.Pin(&code[0])
	prog.Code = uintptr(unsafe.Pointer(&code[0]))
	err := d.p.call(capi.SlotPJRT_Executable_OptimizedProgram, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(prog)
	if err != nil {
		return nil, "", err
	}
	return code[:prog.CodeSize], goStringN(prog.Format, int(prog.FormatSize)), nil
}

func (d execDetails) CompileOptions() ([]byte, error) {
	a := &capi.PJRT_Executable_GetCompileOptions_Args{StructSize: capi.PJRT_Executable_GetCompileOptions_Args_STRUCT_SIZE, Executable: d.exec}
	if err := d.p.call(capi.SlotPJRT_Executable_GetCompileOptions, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	out := []byte(goStringN(a.SerializedBytes, int(a.SerializedBytesSize)))
	if a.SerializedCompileOptionsDeleter != 0 && a.SerializedCompileOptions != 0 {
		callVoid(a.SerializedCompileOptionsDeleter, a.SerializedCompileOptions)
	}
	return out, nil
}

// stringArray copies n strings given as pointer and size arrays.
func stringArray(ptrs, sizes uintptr, n int) []string {
	out := make([]string, 0, max(n, 0))
	if n <= 0 || ptrs == 0 || sizes == 0 {
		return out
	}
	ps := unsafe.Slice((*uintptr)(cptr(ptrs)), n)
	ss := unsafe.Slice((*uint64)(cptr(sizes)), n)
	for i := range ps {
		out = append(out, goStringN(ps[i], int(ss[i])))
	}
	return out
}

func (d execDetails) ParameterMemoryKinds() ([]string, error) {
	a := &capi.PJRT_Executable_ParameterMemoryKinds_Args{StructSize: capi.PJRT_Executable_ParameterMemoryKinds_Args_STRUCT_SIZE, Executable: d.exec}
	if err := d.p.call(capi.SlotPJRT_Executable_ParameterMemoryKinds, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return stringArray(a.MemoryKinds, a.MemoryKindSizes, int(a.NumParameters)), nil
}

// layoutList serializes the executable-owned layouts of the Layouts
// extension's output/parameter queries.
func (d execDetails) layoutList(outputs bool) ([][]byte, error) {
	op := "PJRT_Layouts_PJRT_Executable_GetParameterLayouts"
	if outputs {
		op = "PJRT_Layouts_PJRT_Executable_GetOutputLayouts"
	}
	ext, err := d.p.layouts(op)
	if err != nil {
		return nil, err
	}
	var arr uintptr
	var n int
	if outputs {
		a := &capi.PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args{StructSize: capi.PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args_STRUCT_SIZE, Executable: d.exec}
		err = d.p.callExt(d.p.layoutFn(ext, &ext.PJRT_Layouts_PJRT_Executable_GetOutputLayouts), op, unsafe.Pointer(a))
		arr, n = a.Layouts, int(a.NumOutputs)
	} else {
		a := &capi.PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args{StructSize: capi.PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args_STRUCT_SIZE, Executable: d.exec}
		err = d.p.callExt(d.p.layoutFn(ext, &ext.PJRT_Layouts_PJRT_Executable_GetParameterLayouts), op, unsafe.Pointer(a))
		arr, n = a.Layouts, int(a.NumParameters)
	}
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, n)
	for _, l := range ptrSlice(arr, n) {
		b, err := d.p.serializeLayout(ext, l, false)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func (d execDetails) OutputLayouts() ([][]byte, error)    { return d.layoutList(true) }
func (d execDetails) ParameterLayouts() ([][]byte, error) { return d.layoutList(false) }

// Loaded-executable queries.

func (e *cExecutable) Delete() error {
	a := &capi.PJRT_LoadedExecutable_Delete_Args{StructSize: capi.PJRT_LoadedExecutable_Delete_Args_STRUCT_SIZE, Executable: e.loaded}
	return e.c.p.call(capi.SlotPJRT_LoadedExecutable_Delete, unsafe.Pointer(a), nil)
}

func (e *cExecutable) IsDeleted() (bool, error) {
	a := &capi.PJRT_LoadedExecutable_IsDeleted_Args{StructSize: capi.PJRT_LoadedExecutable_IsDeleted_Args_STRUCT_SIZE, Executable: e.loaded}
	if err := e.c.p.call(capi.SlotPJRT_LoadedExecutable_IsDeleted, unsafe.Pointer(a), nil); err != nil {
		return false, err
	}
	return a.IsDeleted, nil
}

func (e *cExecutable) DeviceAssignment() ([]byte, error) {
	a := &capi.PJRT_LoadedExecutable_GetDeviceAssignment_Args{StructSize: capi.PJRT_LoadedExecutable_GetDeviceAssignment_Args_STRUCT_SIZE, Executable: e.loaded}
	if err := e.c.p.call(capi.SlotPJRT_LoadedExecutable_GetDeviceAssignment, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	out := []byte(goStringN(a.SerializedBytes, int(a.SerializedBytesSize)))
	if a.SerializedDeviceAssignmentDeleter != 0 && a.SerializedDeviceAssignment != 0 {
		callVoid(a.SerializedDeviceAssignmentDeleter, a.SerializedDeviceAssignment)
	}
	return out, nil
}

func (e *cExecutable) LogicalDeviceIDs() ([]backend.LogicalDeviceID, error) {
	a := &capi.PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args{StructSize: capi.PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args_STRUCT_SIZE, Executable: e.loaded}
	if err := e.c.p.call(capi.SlotPJRT_LoadedExecutable_AddressableDeviceLogicalIds, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	out := make([]backend.LogicalDeviceID, 0, int(a.NumAddressableDeviceLogicalIds))
	if a.AddressableDeviceLogicalIds != 0 && a.NumAddressableDeviceLogicalIds > 0 {
		for _, id := range unsafe.Slice((*capi.PJRT_LogicalDeviceIds)(cptr(a.AddressableDeviceLogicalIds)), int(a.NumAddressableDeviceLogicalIds)) {
			out = append(out, backend.LogicalDeviceID{Replica: int(id.Replica), Partition: int(id.Partition)})
		}
	}
	return out, nil
}

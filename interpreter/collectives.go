package interpreter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/halo-ml/halo/stablehlo"
)

// Simulated devices and collectives.
//
// A program compiled for R replicas and P partitions runs as R*P
// goroutines, one per (replica, partition) process, that share one
// Rendezvous. Every collective op splits the process grid into process
// groups as the StableHLO specification says (cross_replica,
// cross_partition, cross_replica_and_partition, flattened_ids), and the
// members of a group meet at the rendezvous: each deposits its operands
// and waits for the others. A member that does not arrive within the
// rendezvous timeout fails the op with an error naming the missing
// devices (CollectiveTimeoutError); a member that finished its run without
// reaching the op fails it at once (CollectiveUnreachedError); a device
// that fails cancels the waits of the others.

// DefaultCollectiveTimeout is how long a device waits at a collective for
// its peers before the op fails, unless the Rendezvous says otherwise.
const DefaultCollectiveTimeout = 30 * time.Second

// ProcessID is one process of the StableHLO process grid: a (replica,
// partition) pair.
type ProcessID struct{ Replica, Partition int }

// String prints the process as "(replica, partition)".
func (p ProcessID) String() string { return fmt.Sprintf("(%d, %d)", p.Replica, p.Partition) }

// Rendezvous is where the devices of one execution meet for collectives.
// Make one per execution with NewRendezvous and give it to every device's
// Device.Rendezvous.
type Rendezvous struct {
	replicas, partitions int
	timeout              time.Duration

	// byKind makes processes that run different functions (MPMD:
	// run_parallel) meet at collectives of the same kind, by name and
	// channel, instead of at the same op.
	byKind bool

	mu       sync.Mutex
	seq      map[rvSeqKey]int64
	pending  map[rvKey]*rvInstance
	finished map[ProcessID]bool // processes whose run ended without error (Done)

	failed   chan struct{} // closed by Fail
	failOnce sync.Once
	failErr  error
}

type rvSeqKey struct {
	op   any // the *stablehlo.Op, or its opKind (Rendezvous.byKind)
	proc ProcessID
}

// rvKey identifies one meeting: the op, how many times each member has
// reached it before (loops and repeated calls meet once per iteration),
// and the group's first member (groups of one op meet separately).
type rvKey struct {
	op     any
	seq    int64
	leader ProcessID
}

// opKind is what collectives of different functions have in common when
// they meet: the op's name and channel.
type opKind struct {
	name    string
	channel stablehlo.ChannelHandle
}

// rvInstance is one meeting of a process group.
type rvInstance struct {
	what    string // the op, for messages: its name and line
	group   []ProcessID
	vals    [][]Value
	arrived int
	done    chan struct{}

	// once computes a result shared by the members (all_reduce).
	once   sync.Once
	shared []*Tensor
	err    error
}

// NewRendezvous returns the meeting place of one execution of a program
// with the given numbers of replicas and partitions. timeout bounds each
// wait for peers (DefaultCollectiveTimeout when 0).
func NewRendezvous(replicas, partitions int, timeout time.Duration) *Rendezvous {
	if timeout <= 0 {
		timeout = DefaultCollectiveTimeout
	}
	return &Rendezvous{
		replicas: replicas, partitions: partitions, timeout: timeout,
		seq: map[rvSeqKey]int64{}, pending: map[rvKey]*rvInstance{},
		failed: make(chan struct{}),
	}
}

// Fail marks the execution failed: every device waiting at (or later
// reaching) a collective returns an error naming dev and err instead of
// waiting for peers that will never come. Only the first call counts.
func (r *Rendezvous) Fail(dev ProcessID, err error) {
	if r == nil {
		return
	}
	r.fail(fmt.Errorf("device %v failed: %w", dev, err))
}

// fail records err as the execution's failure (the first call counts) and
// releases every waiting device.
func (r *Rendezvous) fail(err error) {
	r.failOnce.Do(func() {
		r.failErr = err
		close(r.failed)
	})
}

// Done tells r that device dev's run ended without error: a process group
// waiting for dev at a collective it did not reach (a device that took
// another branch, or looped fewer times) fails at once, naming dev and the
// op, not at the timeout as "never arrived".
func (r *Rendezvous) Done(dev ProcessID) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.finished == nil {
		r.finished = map[ProcessID]bool{}
	}
	r.finished[dev] = true
	var stuck *rvInstance
	for _, inst := range r.pending {
		if inst.waitsFor(dev) {
			stuck = inst
			break
		}
	}
	var err *CollectiveUnreachedError
	if stuck != nil {
		err = stuck.unreachedError(dev)
	}
	r.mu.Unlock()
	if err != nil {
		r.fail(err)
	}
}

// waitsFor reports whether the meeting still lacks dev's contribution
// (under the Rendezvous's lock).
func (inst *rvInstance) waitsFor(dev ProcessID) bool {
	for i, p := range inst.group {
		if p == dev {
			return inst.vals[i] == nil
		}
	}
	return false
}

// unreachedError is the error of a meeting that finished device dev will
// never join (under the Rendezvous's lock).
func (inst *rvInstance) unreachedError(dev ProcessID) *CollectiveUnreachedError {
	var waiting []string
	for i, v := range inst.vals {
		if v != nil {
			waiting = append(waiting, inst.group[i].String())
		}
	}
	return &CollectiveUnreachedError{inst: inst, msg: fmt.Sprintf("device %v finished without reaching %s, where device(s) %s wait for it in process group %v",
		dev, inst.what, strings.Join(waiting, ", "), inst.group)}
}

// CollectiveUnreachedError is the error of the devices waiting at a
// collective that a member of their process group finished its run
// without reaching: programs that do not run the same collectives on
// every device of a group (a branch or a loop count that differs).
type CollectiveUnreachedError struct {
	inst *rvInstance
	msg  string
}

// Error names the device that finished, the op and the devices waiting.
func (e *CollectiveUnreachedError) Error() string { return e.msg }

// Err returns the error Fail recorded, or nil.
func (r *Rendezvous) Err() error {
	if r == nil {
		return nil
	}
	select {
	case <-r.failed:
		return r.failErr
	default:
		return nil
	}
}

// grid returns the number of replicas and partitions of the execution x
// runs in.
func (x *Exec) grid() (replicas, partitions int) {
	if rv := x.Device.Rendezvous; rv != nil {
		return rv.replicas, rv.partitions
	}
	r, p := 1, 1
	if x.Program != nil {
		r, p = max(x.Program.NumReplicas, 1), max(x.Program.NumPartitions, 1)
	}
	return r, p
}

func (x *Exec) self() ProcessID {
	return ProcessID{Replica: x.Device.Replica, Partition: x.Device.Partition}
}

// exchange deposits vals as the contribution of group[me] and waits until
// every member of the group has deposited; it returns the instance, whose
// vals are read-only from then on.
func (x *Exec) exchange(op *stablehlo.Op, group []ProcessID, me int, vals []Value) (*rvInstance, error) {
	rv := x.Device.Rendezvous
	if me < 0 || me >= len(group) {
		return nil, fmt.Errorf("device %v is not in process group %v", x.self(), group)
	}
	if len(group) == 1 {
		return &rvInstance{group: group, vals: [][]Value{vals}}, nil
	}
	if rv == nil {
		return nil, fmt.Errorf("process group %v has %d devices but the execution has no Rendezvous (run with Program.RunSPMD or give Device.Rendezvous)", group, len(group))
	}
	if err := rv.Err(); err != nil {
		return nil, fmt.Errorf("cancelled: %w", err)
	}
	var at any = op
	if rv.byKind {
		ch, _ := op.Attr("channel_handle").(stablehlo.ChannelHandle)
		at = opKind{name: op.Name, channel: ch}
	}
	rv.mu.Lock()
	sk := rvSeqKey{op: at, proc: group[me]}
	seq := rv.seq[sk]
	rv.seq[sk] = seq + 1
	key := rvKey{op: at, seq: seq, leader: group[0]}
	inst := rv.pending[key]
	if inst == nil {
		what := op.Name
		if op.Line > 0 {
			what += fmt.Sprintf(" (line %d)", op.Line)
		}
		inst = &rvInstance{what: what, group: group, vals: make([][]Value, len(group)), done: make(chan struct{})}
		rv.pending[key] = inst
	} else if !sameGroup(inst.group, group) {
		rv.mu.Unlock()
		return nil, fmt.Errorf("devices disagree on the process group: %v has %v, another member has %v", group[me], group, inst.group)
	}
	if inst.vals[me] != nil {
		rv.mu.Unlock()
		return nil, fmt.Errorf("device %v arrived twice at the same collective", group[me])
	}
	if vals == nil {
		vals = []Value{}
	}
	inst.vals[me] = vals
	inst.arrived++
	if inst.arrived == len(group) {
		delete(rv.pending, key)
		close(inst.done)
	}
	var unreached *CollectiveUnreachedError
	for p := range rv.finished {
		if inst.waitsFor(p) {
			unreached = inst.unreachedError(p)
			break
		}
	}
	rv.mu.Unlock()
	if unreached != nil {
		rv.fail(unreached)
		return nil, unreached
	}

	select {
	case <-inst.done:
		return inst, nil
	default:
	}
	timer := time.NewTimer(rv.timeout)
	defer timer.Stop()
	ctxDone := (<-chan struct{})(nil)
	if x.Ctx != nil {
		ctxDone = x.Ctx.Done()
	}
	select {
	case <-inst.done:
		return inst, nil
	case <-rv.failed:
		if u, ok := rv.failErr.(*CollectiveUnreachedError); ok && u.inst == inst {
			return nil, u // this group's own failure, not another's cancellation
		}
		return nil, fmt.Errorf("cancelled: %w", rv.failErr)
	case <-ctxDone:
		return nil, context.Cause(x.Ctx)
	case <-timer.C:
		rv.mu.Lock()
		var missing []string
		for i, v := range inst.vals {
			if v == nil {
				missing = append(missing, group[i].String())
			}
		}
		rv.mu.Unlock()
		if len(missing) == 0 { // everyone arrived just now
			<-inst.done
			return inst, nil
		}
		err := &CollectiveTimeoutError{msg: fmt.Sprintf("devices %s (replica, partition) never arrived within %v; device %v waited in process group %v",
			strings.Join(missing, ", "), rv.timeout, group[me], group)}
		rv.Fail(group[me], err)
		return nil, err
	}
}

// CollectiveTimeoutError is the error of a device whose collective's
// peers did not all arrive within the rendezvous timeout
// (SPMDOptions.Timeout): programs that do not run the same collectives on
// every device of a group.
type CollectiveTimeoutError struct{ msg string }

// Error names the devices that never arrived and the one that waited.
func (e *CollectiveTimeoutError) Error() string { return e.msg }

func sameGroup(a, b []ProcessID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ---- process groups ----

// groupMode is a strategy of the spec's "process groups" section.
type groupMode int

const (
	crossReplica groupMode = iota
	crossPartition
	crossReplicaAndPartition
	flattenedIDs
)

func (m groupMode) String() string {
	return [...]string{"cross_replica", "cross_partition", "cross_replica_and_partition", "flattened_ids"}[m]
}

// channelID returns the op's channel handle (0 when absent).
func channelID(op *stablehlo.Op) (int64, error) {
	switch a := op.Attr("channel_handle").(type) {
	case nil:
		return 0, nil
	case stablehlo.ChannelHandle:
		return a.Handle, nil
	default:
		return 0, fmt.Errorf("channel_handle is %T, want #stablehlo.channel_handle", a)
	}
}

// useGlobalDeviceIDs reads the unit attribute use_global_device_ids.
func useGlobalDeviceIDs(op *stablehlo.Op) (bool, error) {
	switch a := op.Attr("use_global_device_ids").(type) {
	case nil:
		return false, nil
	case stablehlo.UnitAttr:
		return true, nil
	case stablehlo.BoolAttr:
		return bool(a), nil
	default:
		return false, fmt.Errorf("use_global_device_ids is %T, want a unit attribute", a)
	}
}

// rtDenseInts decodes an integer DenseElementsAttr (a splat is expanded).
func rtDenseInts(a stablehlo.DenseElementsAttr) ([]int64, error) { return a.Int64s() }

// rtIntsAttr reads op's dense integer attribute name and its values.
func rtIntsAttr(op *stablehlo.Op, name string) (stablehlo.DenseElementsAttr, []int64, error) {
	a, ok := op.Attr(name).(stablehlo.DenseElementsAttr)
	if !ok {
		if op.Attr(name) == nil {
			return a, nil, fmt.Errorf("missing attribute %s", name)
		}
		return a, nil, fmt.Errorf("%s is %T, want a dense integer tensor", name, op.Attr(name))
	}
	vals, err := rtDenseInts(a)
	if err != nil {
		return a, nil, fmt.Errorf("%s: %w", name, err)
	}
	return a, vals, nil
}

// rtPairs reads collective_permute's source_target_pairs: a rank-2
// integer attribute of (source, target) rows of process ids.
func rtPairs(op *stablehlo.Op) ([][]int64, error) {
	const name = "source_target_pairs"
	a, vals, err := rtIntsAttr(op, name)
	if err != nil {
		return nil, err
	}
	if len(a.Type.Dims) != 2 || a.Type.Dims[0] > 0 && a.Type.Dims[1] != 2 {
		return nil, fmt.Errorf("%s must be a tensor<Nx2xi64> of (source, target) rows, is %v", name, a.Type)
	}
	out := make([][]int64, a.Type.Dims[0])
	for i := range out {
		out[i] = vals[2*i : 2*i+2]
		if out[i][0] < 0 || out[i][1] < 0 {
			return nil, fmt.Errorf("%s holds %v: process ids are non-negative", name, out[i])
		}
	}
	return out, nil
}

// rtGroups reads a rank-2 integer attribute (replica_groups) as rows.
// Negative entries pad groups of unequal size and are dropped.
func (x *Exec) rtGroups(op *stablehlo.Op, name string) ([][]int64, error) {
	if o, ok := op.Attr(name).(stablehlo.OpaqueAttr); ok && name == "replica_groups" {
		var m *stablehlo.Module
		if x.Program != nil {
			m = x.Program.Module
		}
		return stablehlo.ReplicaGroupsIn(m, o) // #stablehlo.replica_group_mesh_axes<...>
	}
	a, vals, err := rtIntsAttr(op, name)
	if err != nil {
		return nil, err
	}
	switch len(a.Type.Dims) {
	case 2:
	case 1:
		if len(vals) == 0 {
			return nil, nil
		}
		// StableHLO's groups are rank 2, and XLA refuses rank 1.
		return nil, fmt.Errorf("%s must be rank 2 (groups x members, e.g. dense<[%s]>), is %v", name, fmtGroup(vals), a.Type)
	default:
		return nil, fmt.Errorf("%s must be rank 2, is %v", name, a.Type)
	}
	rows, cols := int(a.Type.Dims[0]), int(a.Type.Dims[1])
	out := make([][]int64, 0, rows)
	for i := 0; i < rows; i++ {
		var g []int64
		for _, v := range vals[i*cols : (i+1)*cols] {
			switch {
			case v >= 0:
				g = append(g, v)
			case v != -1: // -1 pads uneven groups
				return nil, fmt.Errorf("%s holds %d: ids are non-negative (-1 pads a short group)", name, v)
			}
		}
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return out, nil
}

// processGroup returns the process group x's device belongs to under the
// given strategy, and its position in the group. Empty groups mean one
// group of every id. A device in no group gets a nil group.
func (x *Exec) processGroup(mode groupMode, groups [][]int64) ([]ProcessID, int, error) {
	R, P := x.grid()
	me := x.self()
	var n int
	switch mode {
	case crossReplica, crossReplicaAndPartition:
		n = R
	case crossPartition:
		n = P
	case flattenedIDs:
		n = R * P
	}
	if len(groups) == 0 {
		all := make([]int64, n)
		for i := range all {
			all[i] = int64(i)
		}
		groups = [][]int64{all}
	}
	seen := make(map[int64]bool, n)
	for _, g := range groups {
		for _, id := range g {
			if id < 0 || id >= int64(n) { // a mesh's device_ids may be negative
				return nil, 0, fmt.Errorf("%s group id %d is out of range: the execution has %d replicas and %d partitions", mode, id, R, P)
			}
			if seen[id] {
				return nil, 0, fmt.Errorf("%s group id %d appears twice", mode, id)
			}
			seen[id] = true
		}
	}
	var myID int64
	switch mode {
	case crossReplica, crossReplicaAndPartition:
		myID = int64(me.Replica)
	case crossPartition:
		myID = int64(me.Partition)
	case flattenedIDs:
		myID = int64(me.Replica*P + me.Partition)
	}
	for _, g := range groups {
		pos := -1
		for i, id := range g {
			if id == myID {
				pos = i
			}
		}
		if pos < 0 {
			continue
		}
		var out []ProcessID
		switch mode {
		case crossReplica:
			for _, id := range g {
				out = append(out, ProcessID{int(id), me.Partition})
			}
		case crossPartition:
			for _, id := range g {
				out = append(out, ProcessID{me.Replica, int(id)})
			}
		case crossReplicaAndPartition:
			// Replica-major, as XLA orders the participants (and the
			// StableHLO interpreter since openxla/stablehlo#1933); the
			// spec's pseudo-code lists partitions first.
			for _, id := range g {
				for p := 0; p < P; p++ {
					out = append(out, ProcessID{int(id), p})
				}
			}
			pos = pos*P + me.Partition
		case flattenedIDs:
			for _, id := range g {
				out = append(out, ProcessID{int(id) / P, int(id) % P})
			}
		}
		return out, pos, nil
	}
	return nil, -1, nil
}

// gatherGroup is the grouping of all_gather, all_reduce and reduce_scatter.
func (x *Exec) gatherGroup(op *stablehlo.Op) ([]ProcessID, int, error) {
	ch, err := channelID(op)
	if err != nil {
		return nil, 0, err
	}
	global, err := useGlobalDeviceIDs(op)
	if err != nil {
		return nil, 0, err
	}
	groups, err := x.rtGroups(op, "replica_groups")
	if err != nil {
		return nil, 0, err
	}
	mode := crossReplica
	switch {
	case ch <= 0 && global:
		return nil, 0, fmt.Errorf("use_global_device_ids needs a positive channel_id")
	case ch > 0 && global:
		mode = flattenedIDs
	case ch > 0:
		mode = crossReplicaAndPartition
	}
	return x.memberGroup(mode, groups)
}

// channelGroup is the grouping of all_to_all and collective_broadcast:
// cross_replica without a channel, cross_partition with one.
func (x *Exec) channelGroup(op *stablehlo.Op) ([]ProcessID, int, error) {
	ch, err := channelID(op)
	if err != nil {
		return nil, 0, err
	}
	groups, err := x.rtGroups(op, "replica_groups")
	if err != nil {
		return nil, 0, err
	}
	mode := crossReplica
	if ch > 0 {
		mode = crossPartition
	}
	return x.processGroup(mode, groups)
}

func (x *Exec) memberGroup(mode groupMode, groups [][]int64) ([]ProcessID, int, error) {
	g, pos, err := x.processGroup(mode, groups)
	if err != nil {
		return nil, 0, err
	}
	if g == nil {
		return nil, 0, fmt.Errorf("device %v is in no %s process group of %v", x.self(), mode, groups)
	}
	return g, pos, nil
}

// ---- kernels ----

func init() {
	registerKernel("stablehlo.replica_id", kernelReplicaID)
	registerKernel("stablehlo.partition_id", kernelPartitionID)
	registerKernel("stablehlo.all_reduce", kernelAllReduce)
	registerKernel("stablehlo.collective_reduce", kernelCollectiveReduce)
	registerKernel("stablehlo.all_gather", kernelAllGather)
	registerKernel("stablehlo.reduce_scatter", kernelReduceScatter)
	registerKernel("stablehlo.all_to_all", kernelAllToAll)
	registerKernel("stablehlo.collective_permute", kernelCollectivePermute)
	registerKernel("stablehlo.collective_broadcast", kernelCollectiveBroadcast)
	registerKernel("stablehlo.cross-replica-sum", kernelCrossReplicaSum)
}

func kernelReplicaID(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	return idResult(op, uint64(x.Device.Replica))
}

func kernelPartitionID(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	return idResult(op, uint64(x.Device.Partition))
}

func idResult(op *stablehlo.Op, id uint64) ([]Value, error) {
	rt, err := ResultTensorType(op, 0)
	if err != nil {
		return nil, err
	}
	t := NewTensor(rt.Shape())
	if t.Len() != 1 {
		return nil, fmt.Errorf("result %v is not a scalar", rt)
	}
	if err := rtSetInt(t, 0, id); err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

// rtSetInt stores an integer in element i of an integer tensor.
func rtSetInt(t *Tensor, i int, v uint64) error {
	switch d := t.Data.(type) {
	case []int8:
		d[i] = int8(WrapInt(t.Shape.DType, int64(v)))
	case []int16:
		d[i] = int16(v)
	case []int32:
		d[i] = int32(v)
	case []int64:
		d[i] = int64(v)
	case []uint8:
		d[i] = uint8(WrapUint(t.Shape.DType, v))
	case []uint16:
		d[i] = uint16(v)
	case []uint32:
		d[i] = uint32(v)
	case []uint64:
		d[i] = v
	default:
		return fmt.Errorf("want an integer tensor, got %v", t.Shape)
	}
	return nil
}

// tensorArgs checks that every arg is a tensor.
func tensorArgs(args []Value) ([]*Tensor, error) {
	out := make([]*Tensor, len(args))
	for i, a := range args {
		t, ok := a.(*Tensor)
		if !ok || t == nil {
			return nil, fmt.Errorf("operand %d is %T, want a tensor", i, a)
		}
		out[i] = t
	}
	return out, nil
}

func kernelAllReduce(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	return reduceInGroup(x, op, args, false)
}

// kernelCollectiveReduce reduces like all_reduce, but only the first
// member of each group keeps the result; the others get zeros.
func kernelCollectiveReduce(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	return reduceInGroup(x, op, args, true)
}

// reduceInGroup gives every member of x's group (rootOnly: only the first
// member, the others zeros) the reduction of the group's args.
func reduceInGroup(x *Exec, op *stablehlo.Op, args []Value, rootOnly bool) ([]Value, error) {
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	group, me, err := x.gatherGroup(op)
	if err != nil {
		return nil, err
	}
	red, err := x.groupReduce(op, group, me, args, len(ts))
	if err != nil {
		return nil, err
	}
	out := make([]Value, len(red))
	for i, t := range red {
		if rootOnly && me != 0 {
			out[i] = NewTensor(t.Shape)
		} else {
			out[i] = t.Clone()
		}
	}
	return out, nil
}

// groupReduce exchanges args in the group and returns the element-wise
// reduction of each of the n operands over the members, computed once and
// shared (read-only) by the members.
func (x *Exec) groupReduce(op *stablehlo.Op, group []ProcessID, me int, args []Value, n int) ([]*Tensor, error) {
	if len(op.Regions) != 1 {
		return nil, fmt.Errorf("want one computation region, have %d", len(op.Regions))
	}
	inst, err := x.exchange(op, group, me, args)
	if err != nil {
		return nil, err
	}
	inst.once.Do(func() {
		inst.shared = make([]*Tensor, n)
		for k := 0; k < n; k++ {
			parts := make([]*Tensor, len(inst.vals))
			for m, vs := range inst.vals {
				if len(vs) != n {
					inst.err = fmt.Errorf("device %v has %d operands, device %v has %d", inst.group[m], len(vs), inst.group[0], n)
					return
				}
				t, ok := vs[k].(*Tensor)
				if !ok || t == nil || (m > 0 && !t.Shape.Equal(parts[0].Shape)) {
					inst.err = fmt.Errorf("device %v: operand %d does not match the other devices'", inst.group[m], k)
					return
				}
				parts[m] = t
			}
			inst.shared[k], inst.err = x.reduceTensors(op.Regions[0], parts)
			if inst.err != nil {
				return
			}
		}
	})
	if inst.err != nil {
		return nil, inst.err
	}
	return inst.shared, nil
}

func kernelCrossReplicaSum(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	if len(ts) != 1 {
		return nil, fmt.Errorf("want one operand, have %d", len(ts))
	}
	groups, err := x.rtGroups(op, "replica_groups")
	if err != nil {
		return nil, err
	}
	group, me, err := x.memberGroup(crossReplica, groups)
	if err != nil {
		return nil, err
	}
	inst, err := x.exchange(op, group, me, args)
	if err != nil {
		return nil, err
	}
	parts := make([]*Tensor, len(inst.vals))
	for m, vs := range inst.vals {
		t, ok := vs[0].(*Tensor)
		if !ok || !t.Shape.Equal(ts[0].Shape) {
			return nil, fmt.Errorf("device %v: operand does not match", inst.group[m])
		}
		parts[m] = t
	}
	sum, ok := reduceFast("stablehlo.add", parts)
	if !ok {
		return nil, fmt.Errorf("cannot add %v", ts[0].Shape)
	}
	return []Value{sum}, nil
}

func kernelReduceScatter(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	if len(ts) != 1 {
		return nil, fmt.Errorf("want one operand, have %d", len(ts))
	}
	dim, err := intAttr(op, "scatter_dimension")
	if err != nil {
		return nil, err
	}
	rank := ts[0].Shape.Rank()
	if dim < 0 || dim >= int64(rank) {
		return nil, fmt.Errorf("scatter_dimension %d is out of range for rank %d", dim, rank)
	}
	group, me, err := x.gatherGroup(op)
	if err != nil {
		return nil, err
	}
	d := ts[0].Shape.Dims[dim]
	if d%int64(len(group)) != 0 {
		return nil, fmt.Errorf("dimension %d of size %d does not split into %d parts (one per device of the process group)", dim, d, len(group))
	}
	red, err := x.groupReduce(op, group, me, args, 1)
	if err != nil {
		return nil, err
	}
	part := d / int64(len(group))
	out := rtSliceDim(red[0], int(dim), int64(me)*part, part)
	if err := checkResult(op, 0, out); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

func kernelAllGather(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	dim, err := intAttr(op, "all_gather_dim")
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if dim < 0 || dim >= int64(t.Shape.Rank()) {
			return nil, fmt.Errorf("all_gather_dim %d is out of range for %v", dim, t.Shape)
		}
	}
	group, me, err := x.gatherGroup(op)
	if err != nil {
		return nil, err
	}
	inst, err := x.exchange(op, group, me, args)
	if err != nil {
		return nil, err
	}
	return inst.concatOperands(op, len(ts), int(dim), func(k int, t *Tensor) (*Tensor, bool) {
		return t, t.Shape.DType == ts[k].Shape.DType
	})
}

func kernelAllToAll(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	splitDim, err := intAttr(op, "split_dimension")
	if err != nil {
		return nil, err
	}
	concatDim, err := intAttr(op, "concat_dimension")
	if err != nil {
		return nil, err
	}
	splitCount, err := intAttr(op, "split_count")
	if err != nil {
		return nil, err
	}
	if splitCount <= 0 {
		return nil, fmt.Errorf("split_count %d must be positive", splitCount)
	}
	for _, t := range ts {
		r := int64(t.Shape.Rank())
		if splitDim < 0 || splitDim >= r || concatDim < 0 || concatDim >= r {
			return nil, fmt.Errorf("split_dimension %d or concat_dimension %d is out of range for %v", splitDim, concatDim, t.Shape)
		}
		if t.Shape.Dims[splitDim]%splitCount != 0 {
			return nil, fmt.Errorf("dimension %d of %v does not split into %d parts", splitDim, t.Shape, splitCount)
		}
	}
	group, me, err := x.channelGroup(op)
	if err != nil {
		return nil, err
	}
	if group == nil {
		return nil, fmt.Errorf("device %v is in no process group", x.self())
	}
	if int64(len(group)) != splitCount {
		return nil, fmt.Errorf("split_count %d differs from the process group size %d", splitCount, len(group))
	}
	inst, err := x.exchange(op, group, me, args)
	if err != nil {
		return nil, err
	}
	return inst.concatOperands(op, len(ts), int(concatDim), func(k int, st *Tensor) (*Tensor, bool) {
		t := ts[k]
		if !st.Shape.Equal(t.Shape) {
			return nil, false
		}
		part := t.Shape.Dims[splitDim] / splitCount
		return rtSliceDim(st, int(splitDim), int64(me)*part, part), true
	})
}

// concatOperands makes the n results of an all_gather or all_to_all:
// result k joins, along dim and in group order, piece(k, t) of every
// member's operand k t; piece reports false when t does not match this
// device's operand k.
func (inst *rvInstance) concatOperands(op *stablehlo.Op, n, dim int, piece func(k int, t *Tensor) (*Tensor, bool)) ([]Value, error) {
	out := make([]Value, n)
	for k := range out {
		parts := make([]*Tensor, len(inst.vals))
		for m, vs := range inst.vals {
			if len(vs) != n {
				return nil, fmt.Errorf("device %v has %d operands, this device %d", inst.group[m], len(vs), n)
			}
			t, ok := vs[k].(*Tensor)
			if ok {
				t, ok = piece(k, t)
			}
			if !ok {
				return nil, fmt.Errorf("device %v: operand %d does not match", inst.group[m], k)
			}
			parts[m] = t
		}
		res, err := rtConcat(parts, dim)
		if err != nil {
			return nil, err
		}
		if err := checkResult(op, k, res); err != nil {
			return nil, err
		}
		out[k] = res
	}
	return out, nil
}

func kernelCollectivePermute(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	if len(ts) != 1 {
		return nil, fmt.Errorf("want one operand, have %d", len(ts))
	}
	ch, err := channelID(op)
	if err != nil {
		return nil, err
	}
	pairs, err := rtPairs(op)
	if err != nil {
		return nil, err
	}
	R, P := x.grid()
	me := x.self()
	// Every process with the same partition (cross_replica) or replica
	// (cross_partition) meets; pairs name replica or partition ids.
	var group []ProcessID
	var pos, n int
	if ch > 0 {
		n = P
		for p := 0; p < P; p++ {
			group = append(group, ProcessID{me.Replica, p})
		}
		pos = me.Partition
	} else {
		n = R
		for r := 0; r < R; r++ {
			group = append(group, ProcessID{r, me.Partition})
		}
		pos = me.Replica
	}
	src := -1
	seenS, seenT := map[int64]bool{}, map[int64]bool{}
	for _, pr := range pairs {
		if len(pr) != 2 {
			return nil, fmt.Errorf("source_target_pairs must have two columns")
		}
		if pr[0] >= int64(n) || pr[1] >= int64(n) {
			return nil, fmt.Errorf("source_target_pair %v is out of range: %d ids", pr, n)
		}
		if seenS[pr[0]] || seenT[pr[1]] {
			return nil, fmt.Errorf("source_target_pairs repeat a source or a target: %v", pairs)
		}
		seenS[pr[0]], seenT[pr[1]] = true, true
		if pr[1] == int64(pos) {
			src = int(pr[0])
		}
	}
	inst, err := x.exchange(op, group, pos, args)
	if err != nil {
		return nil, err
	}
	if src < 0 {
		return []Value{NewTensor(ts[0].Shape)}, nil
	}
	if len(inst.vals[src]) != 1 {
		return nil, fmt.Errorf("device %v has %d operands, this device 1", group[src], len(inst.vals[src]))
	}
	st, ok := inst.vals[src][0].(*Tensor)
	if !ok || !st.Shape.Equal(ts[0].Shape) {
		return nil, fmt.Errorf("device %v sent a value that does not match %v", group[src], ts[0].Shape)
	}
	return []Value{st.Clone()}, nil
}

// kernelCollectiveBroadcast sends each operand of the group's first
// process (or, with has_dynamic_root, of the process the trailing root
// operand names per operand) to every process of the group; a process in
// no group gets zeros.
func kernelCollectiveBroadcast(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	dynamic := false
	switch a := op.Attr("has_dynamic_root").(type) {
	case nil:
	case stablehlo.UnitAttr:
		dynamic = true
	case stablehlo.BoolAttr:
		dynamic = bool(a)
	default:
		return nil, fmt.Errorf("has_dynamic_root is %T, want a unit attribute", a)
	}
	data := ts
	var roots []int64
	if dynamic {
		if len(ts) < 2 {
			return nil, fmt.Errorf("has_dynamic_root needs data operands and a root operand")
		}
		data = ts[:len(ts)-1]
		roots, err = rtTensorInts(ts[len(ts)-1])
		if err != nil {
			return nil, fmt.Errorf("root operand: %w", err)
		}
		if len(roots) != 1 && len(roots) != len(data) {
			return nil, fmt.Errorf("root operand has %d elements for %d data operands", len(roots), len(data))
		}
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("no operand to broadcast")
	}
	group, me, err := x.channelGroup(op)
	if err != nil {
		return nil, err
	}
	out := make([]Value, len(data))
	if group == nil {
		for k, t := range data {
			out[k] = NewTensor(t.Shape)
		}
		return out, nil
	}
	inst, err := x.exchange(op, group, me, args)
	if err != nil {
		return nil, err
	}
	for k, t := range data {
		src := 0
		if roots != nil {
			src = int(roots[min(k, len(roots)-1)])
			if src < 0 || src >= len(group) {
				return nil, fmt.Errorf("root %d is outside the process group of %d", src, len(group))
			}
		}
		if len(inst.vals[src]) != len(args) {
			return nil, fmt.Errorf("device %v has %d operands, this device %d", group[src], len(inst.vals[src]), len(args))
		}
		st, ok := inst.vals[src][k].(*Tensor)
		if !ok || !st.Shape.Equal(t.Shape) {
			return nil, fmt.Errorf("device %v sent a value that does not match %v", group[src], t.Shape)
		}
		out[k] = st.Clone()
	}
	return out, nil
}

// rtTensorInts reads an integer tensor's elements.
func rtTensorInts(t *Tensor) ([]int64, error) {
	out := make([]int64, t.Len())
	for i := range out {
		switch d := t.Data.(type) {
		case []int8:
			out[i] = int64(d[i])
		case []int16:
			out[i] = int64(d[i])
		case []int32:
			out[i] = int64(d[i])
		case []int64:
			out[i] = d[i]
		case []uint8:
			out[i] = int64(d[i])
		case []uint16:
			out[i] = int64(d[i])
		case []uint32:
			out[i] = int64(d[i])
		case []uint64:
			out[i] = int64(d[i])
		default:
			return nil, fmt.Errorf("want integers, got %v", t.Shape)
		}
	}
	return out, nil
}

// intAttr reads an integer attribute.
func intAttr(op *stablehlo.Op, name string) (int64, error) {
	switch a := op.Attr(name).(type) {
	case stablehlo.IntAttr:
		return a.Value, nil
	case nil:
		return 0, fmt.Errorf("missing attribute %s", name)
	default:
		return 0, fmt.Errorf("%s is %T, want an integer", name, a)
	}
}

// checkResult reports whether t has the type of the op's result i.
func checkResult(op *stablehlo.Op, i int, t *Tensor) error {
	rt, err := ResultTensorType(op, i)
	if err != nil {
		return err
	}
	if !stablehlo.TypesCompatible(stablehlo.TensorOf(t.Shape), rt) { // a declared ? takes any size
		return fmt.Errorf("result %d is declared %v, computed %v", i, rt, stablehlo.TensorOf(t.Shape))
	}
	return nil
}

// ---- running every device ----

// SPMDOptions configure Program.RunSPMD.
type SPMDOptions struct {
	// Timeout bounds each wait of a device for its peers at a collective
	// (DefaultCollectiveTimeout when 0). It is wall-clock time, not a
	// deadlock check: a peer still computing counts as missing, so set it
	// above the longest work a device does between two collectives.
	Timeout time.Duration
}

// RunSPMD runs the program on every device of its NumReplicas x
// NumPartitions grid, each in its own goroutine, and returns the results
// of every device. args[d] are the arguments of device d, where device d
// runs replica d / NumPartitions of partition d % NumPartitions. A device
// that fails cancels the others; the error is the first device's
// *DeviceError (the others are joined to it).
func (p *Program) RunSPMD(ctx context.Context, args [][]Value, opts SPMDOptions) ([][]Value, error) {
	if err := p.runnable(); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	R, P := max(p.NumReplicas, 1), max(p.NumPartitions, 1)
	n := R * P
	if len(args) != n {
		return nil, fmt.Errorf("interpreter: %d argument lists for %d devices (%d replicas x %d partitions)", len(args), n, R, P)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rv := NewRendezvous(R, P, opts.Timeout)
	outs := make([][]Value, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for d := 0; d < n; d++ {
		wg.Add(1)
		go func(d int) {
			defer wg.Done()
			dev := Device{Replica: d / P, Partition: d % P, Rendezvous: rv}
			proc := ProcessID{dev.Replica, dev.Partition}
			defer func() {
				if v := recover(); v != nil {
					errs[d] = &DeviceError{d, proc, fmt.Errorf("interpreter panic: %v", v)}
					if e := allocErrorOf(v); e != nil {
						errs[d] = &DeviceError{d, proc, e}
					}
					rv.Fail(proc, errs[d])
					cancel()
				}
			}()
			out, err := p.Run(ctx, dev, args[d])
			if err != nil {
				errs[d] = &DeviceError{d, proc, err}
				rv.Fail(proc, err)
				cancel() // the others stop too, not only at their next collective
				return
			}
			rv.Done(proc)
			outs[d] = out
		}(d)
	}
	wg.Wait()
	if err := firstFailure(errs); err != nil {
		return outs, err
	}
	return outs, nil
}

// DeviceError is how one device of a RunSPMD run failed.
type DeviceError struct {
	Device  int       // its index: replica * NumPartitions + partition
	Process ProcessID // its replica and partition
	Err     error
}

// Error is "device N (replica, partition): " and the device's error.
func (e *DeviceError) Error() string {
	return fmt.Sprintf("device %d %v: %v", e.Device, e.Process, e.Err)
}

// Unwrap returns the device's error.
func (e *DeviceError) Unwrap() error { return e.Err }

// fmtGroup prints one group as a dense literal row: [0, 1, 2].
func fmtGroup(vals []int64) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

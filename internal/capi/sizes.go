package capi

// sizeChange is one entry of structSizeHistory.
type sizeChange struct {
	minor, size int32
}

// StructSizeAt returns the STRUCT_SIZE of the named struct as defined by
// the header at the given minor version: the value from the newest measured
// row at or before that minor. ok is false when the struct is unknown, did
// not exist yet at that minor, or minor is older than the measured history
// (29). Minors newer than APIMinor get the APIMinor value.
//
// Use it to explain a rejected struct: "the plugin (minor M) expects
// PJRT_X_Args of N bytes, halo sends K".
func StructSizeAt(structName string, minor int) (structSize int, ok bool) {
	h := structSizeHistory[structName]
	if len(h) == 0 || minor < int(h[0].minor) {
		return 0, false
	}
	i := len(h) - 1
	for int(h[i].minor) > minor {
		i--
	}
	return int(h[i].size), true
}

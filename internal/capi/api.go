package capi

// APISlot describes one function slot of the PJRT_Api table.
type APISlot struct {
	// Index is the slot number: the function pointer is at
	// APISlotsOffset + 8*Index in PJRT_Api.
	Index int
	// Name is the C name of the slot (and of the PJRT_Api field).
	Name string
	// ByteOffset is the offset of the slot in PJRT_Api.
	ByteOffset uintptr
	// AddedInMinor is the minor version that added the function, or -1 when
	// it predates API versioning.
	AddedInMinor int
	// PresentFromMinor is the first minor whose PJRT_Api contains the slot,
	// or 0 when every measured minor (29 and later) has it. Decide whether a
	// plugin has a slot from its minor version and this value.
	PresentFromMinor int
	// ReportedFromMinor is the first minor whose PJRT_Api_STRUCT_SIZE
	// covers the slot (0: every measured minor). Plugins built at minors 35
	// and 40-56 report a struct_size that is too small, so do not decide
	// from PJRT_Api.struct_size alone.
	ReportedFromMinor int
}

// PresentAt reports whether a plugin built at the given minor version has
// the slot. Minors older than the measured ones (29) are not known.
func (s APISlot) PresentAt(minor int) bool {
	return minor >= s.PresentFromMinor
}

// SlotByName returns the slot with the given C name.
func SlotByName(name string) (APISlot, bool) {
	for _, s := range APISlots {
		if s.Name == name {
			return s, true
		}
	}
	return APISlot{}, false
}

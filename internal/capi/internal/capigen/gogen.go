package capigen

// GoFiles returns the generated Go files of package capi.
func (m *Model) GoFiles() (map[string][]byte, error) {
	return map[string][]byte{}, nil
}

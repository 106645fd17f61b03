package main

// The program's own output, checked.
func Example() {
	main()
	// Output:
	// causal attention, 2 heads of 64x16, blocks 16x16: out[0, 0, :3] = [-0.3517 0.4849 0.4435]
	// the dense program's within 1e-5: true
}

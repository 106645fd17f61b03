package main

// The program's own output, checked.
func Example() {
	main()
	// Output:
	// Error |result - lax.dynamic_slice| = 0
}

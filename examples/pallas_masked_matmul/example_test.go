package main

// The program's own output, checked.
func Example() {
	main()
	// Output:
	// grid over K with prefetch maps (TPU form): matches mask * (x @ y) (mean |result - ref| below 1e-5)
	// one program per output block (GPU form): matches mask * (x @ y) (mean |result - ref| below 1e-5)
}

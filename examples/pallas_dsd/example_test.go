package main

// The program's own output, checked.
func Example() {
	main()
	// Output:
	// 7 non-zero blocks of 64
	// grid over non-zero blocks, zeros aliased (TPU form): matches x @ y (mean |result - ref| below 1e-5)
	// one program per output block (GPU form): matches x @ y (mean |result - ref| below 1e-5)
}

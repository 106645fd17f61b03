package main

// The program's own output, checked.
func Example() {
	main()
	// Output:
	// hello 0
	// world 0
	// hello 1
	// world 1
	// hello 2
	// world 2
	// hello 3
	// world 3
	// done
}

package main

// The program's own output, checked.
func Example() {
	main()
	// Output:
	// [8 10 12 14 16 18 20 22]
}

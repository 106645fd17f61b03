package interpreter

// Rendezvous is where the devices of one execution meet for collectives.
type Rendezvous struct{}

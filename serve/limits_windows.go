package serve

// maxServeConns is how many connections orch serve keeps open at most.
func maxServeConns() int { return 4096 }

package main

import (
	"context"
	"fmt"
)

// runDistributed is wired by the distributed-mode work (internal/herder/distributed.go).
var runDistributed = func(ctx context.Context, args []string) error {
	return fmt.Errorf("distributed mode is not supported yet by this build")
}

package main

import "github.com/connectd/connectd/internal/testutil/workerproc"

var freePort = workerproc.FreePort

package main

// Every built-in plugin registers itself with connect.DefaultRegistry in init().
import (
	_ "github.com/connectd/connectd/connectors/file"
)

package main

import _ "github.com/rotd/coordination/registry/engines" // every storage engine, registered with registry/backend

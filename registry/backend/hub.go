package backend

import (
	"github.com/rotd/coordination/registry/nats/hub"
)

// A hub is the NATS JetStream server that keeps projects shared across
// machines (coord hub; package registry/nats/hub). Front ends start one
// here, as they open a backend here, and name no engine.

// DefaultHubListen is where a hub listens for clients unless told.
const DefaultHubListen = hub.DefaultListen

// DefaultNamespace is the project namespace of a nats:// URL that names
// none.
const DefaultNamespace = hub.DefaultNamespace

// ValidNamespace checks a project namespace as a nats:// URL may name it.
func ValidNamespace(ns string) error { return hub.ValidNamespace(ns) }

// HubOptions say how to run a hub (see registry/nats/hub.Options).
type HubOptions struct {
	// Dir holds the data; it is created if missing and locked while the
	// hub runs (a second hub on it is refused, naming the holder).
	Dir string
	// Listen is HOST:PORT for clients (port 0: a free one; "":
	// DefaultHubListen).
	Listen string
	// Cluster names the cluster this node joins ("": a single node);
	// Routes are the other nodes' route URLs; ClusterListen is HOST:PORT
	// for routes and ClusterAdvertise what the others should route to.
	Cluster, ClusterListen, ClusterAdvertise string
	Routes                                   []string
	// Logf, if set, receives the server's notices and errors.
	Logf func(format string, args ...any)
}

// Hub is a running hub.
type Hub struct{ h *hub.Hub }

// StartHub starts a hub and returns once it serves clients.
func StartHub(o HubOptions) (*Hub, error) {
	h, err := hub.Start(hub.Options{
		Dir:              o.Dir,
		Listen:           o.Listen,
		Cluster:          o.Cluster,
		ClusterListen:    o.ClusterListen,
		ClusterAdvertise: o.ClusterAdvertise,
		Routes:           o.Routes,
		Logf:             o.Logf,
	})
	if err != nil {
		return nil, err
	}
	return &Hub{h}, nil
}

// URL is the nats:// URL clients reach the hub at (no namespace).
func (h *Hub) URL() string { return h.h.URL() }

// Shutdown stops the hub cleanly; it may be called more than once.
func (h *Hub) Shutdown() { h.h.Shutdown() }

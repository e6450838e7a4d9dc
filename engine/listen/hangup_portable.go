//go:build !linux || ccload_portable

package listen

// hangupWatcher is empty where there is no epoll: each connection watches
// itself while a request waits (listener_portable.go), so the registry
// only files connections for Find.
type hangupWatcher struct{}

func newHangups() *hangups {
	return &hangups{conns: map[uint64]*Conn{}}
}

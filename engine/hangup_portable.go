//go:build !linux || ccload_portable

package engine

// hangupWatcher is empty where there is no epoll: each connection watches
// itself while a request waits (listener_portable.go), so the registry
// only files connections for watchHangUp to find.
type hangupWatcher struct{}

func newHangups() *hangups {
	return &hangups{conns: map[uint64]*aheadConn{}}
}

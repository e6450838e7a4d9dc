//go:build linux && !ccload_portable

package listen

import "syscall"

// hangupWatcher is one epoll instance watching every accepted connection
// for the peer's FIN or reset only (EPOLLRDHUP, edge-triggered, no
// EPOLLIN): data arriving wakes nothing, and a connection costs one
// epoll_ctl when it is accepted and nothing per request. One goroutine
// waits on it.
type hangupWatcher struct{ epfd int }

// hangupEvents is what the watcher waits for on a connection. EPOLLET is
// 1<<31: as an untyped constant it is negative on some architectures'
// syscall tables and positive on others, so the mask is built as uint32.
const hangupEvents = uint32(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) | 1<<31

func newHangups() *hangups {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	h := &hangups{watcher: hangupWatcher{epfd: epfd}, conns: map[uint64]*Conn{}}
	go h.run()
	return h
}

// watch registers c and adds its socket fd to the epoll set (closing the
// socket takes it out again). The event carries c's ID, not a pointer.
func (h *hangups) watch(c *Conn, fd int) {
	h.register(c)
	id := c.hangupID
	ev := syscall.EpollEvent{Events: hangupEvents, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	if syscall.EpollCtl(h.watcher.epfd, syscall.EPOLL_CTL_ADD, fd, &ev) != nil {
		h.forget(c)
	}
}

func (h *hangups) run() {
	var events [64]syscall.EpollEvent
	for {
		n, err := syscall.EpollWait(h.watcher.epfd, events[:], -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			h.hungUp(uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32)
		}
	}
}

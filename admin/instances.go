package admin

import (
	"context"

	"github.com/ccload/ccload/admin/adminapi"
)

// instances is the live instance list for /admin/status and
// /admin/channels: this instance's id, the list (never null; empty without
// a Cluster), and why it is the last known one when the database did not
// answer ("" otherwise). The database error is logged, not shown.
func (s *Server) instances(ctx context.Context) (string, []adminapi.Instance, string) {
	out := []adminapi.Instance{}
	if s.cluster == nil {
		return "", out, ""
	}
	self := s.cluster.Self().ID
	list, err := s.cluster.Live(ctx)
	msg := ""
	if err != nil {
		s.log.Warn("instance list: database unreachable, showing the last known list", "err", err)
		msg = "database unreachable: the last known list"
	}
	for _, in := range list {
		out = append(out, adminapi.Instance{
			ID: in.ID, Hostname: in.Hostname, Address: in.Address, Version: in.Version,
			StartedAt: in.Started, LastHeartbeat: in.Heartbeat, InFlight: in.InFlight, Self: in.ID == self,
		})
	}
	return self, out, msg
}

package admin

import (
	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/pricing/catalog"
)

// PriceCatalog reports the price catalog's state; *catalog.Syncer
// implements it.
type PriceCatalog interface{ Status() catalog.Status }

// priceCatalogStatus is /admin/status's price_catalog: nil when no catalog
// is configured or none is wired (tests).
func (s *Server) priceCatalogStatus() *adminapi.PriceCatalogStatus {
	if s.catalog == nil {
		return nil
	}
	st := s.catalog.Status()
	if st.URL == "" {
		return nil
	}
	out := &adminapi.PriceCatalogStatus{
		URL: maskURL(st.URL), Source: string(st.Source), Models: st.Models, Error: st.LastError,
	}
	if !st.Fetched.IsZero() {
		t := st.Fetched
		out.FetchedAt = &t
	}
	if !st.LastAttempt.IsZero() {
		t := st.LastAttempt
		out.LastAttempt = &t
	}
	return out
}

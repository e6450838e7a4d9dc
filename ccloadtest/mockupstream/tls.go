package mockupstream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"
)

// StartTLS is Start over TLS, as the providers serve: it listens on addr,
// presents a certificate made for this server alone (valid for 127.0.0.1,
// ::1 and localhost, for a day) and offers h2 and http/1.1 in ALPN. It
// returns the base URL, "https://127.0.0.1:PORT", and a pool holding only
// that certificate, which a client must trust to reach the server: one
// that trusts the system's roots refuses it, as it would a provider
// behind a bad certificate.
func (s *Server) StartTLS(addr string) (baseURL string, roots *x509.CertPool, err error) {
	cert, err := SelfSigned()
	if err != nil {
		return "", nil, fmt.Errorf("mockupstream: certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	ln, err := s.listen(addr, cfg)
	if err != nil {
		return "", nil, err
	}
	roots = x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	return "https://" + ln.Addr().String(), roots, nil
}

// SelfSigned makes a certificate that is its own authority, the way
// net/http/httptest's is, but a new key per server, so that two mocks do
// not trust each other's.
func SelfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "ccload mock upstream"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

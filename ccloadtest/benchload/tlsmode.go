package main

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// upstreamMode is how the mock upstream is reached: plain http, or TLS
// offering h2 and http/1.1 (what every provider offers), or TLS offering
// only http/1.1.
type upstreamMode string

const (
	modePlain   upstreamMode = "plain"
	modeHTTPSH2 upstreamMode = "https-h2"
	modeHTTPSH1 upstreamMode = "https-h1"
)

func (m upstreamMode) tls() bool { return m != modePlain }

func (m upstreamMode) describe() string {
	switch m {
	case modeHTTPSH2:
		return "mock upstream on TLS, offering h2 and http/1.1"
	case modeHTTPSH1:
		return "mock upstream on TLS, offering http/1.1 only"
	}
	return "mock upstream on plain http"
}

func (m upstreamMode) scheme() string {
	if m.tls() {
		return "https"
	}
	return "http"
}

func parseMode(s string) (upstreamMode, error) {
	switch m := upstreamMode(s); m {
	case modePlain, modeHTTPSH2, modeHTTPSH1:
		return m, nil
	}
	return "", fmt.Errorf("unknown upstream mode %q (plain, https-h2, https-h1)", s)
}

// Files of the TLS mock's certificate in the work directory.
const (
	certFile = "upstream-cert.pem"
	keyFile  = "upstream-key.pem"
)

// writeCert makes a self-signed certificate for 127.0.0.1 in dir and
// returns its path. It is its own CA, so a client that trusts the file
// (SSL_CERT_FILE, which Go's crypto/x509 reads on Linux in place of the
// system roots) verifies the mock as it would a provider.
func writeCert(dir string) (string, error) {
	c, err := mockupstream.SelfSigned()
	if err != nil {
		return "", err
	}
	der := c.Certificate[0]
	kder, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		return "", err
	}
	cert := filepath.Join(dir, certFile)
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, keyFile), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return "", err
	}
	return cert, nil
}

package account

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Credential is what an account's sign-in gives and a refresh renews. It
// is only ever stored sealed.
type Credential struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token,omitempty"`
	IDToken      string `json:"id_token,omitempty"`
	// AccountID is the provider's account id: for Codex the
	// chatgpt_account_id claim of the id token, sent as chatgpt-account-id.
	AccountID string `json:"account_id,omitempty"`
	// Expires is when AccessToken expires (zero: unknown), Issued when it
	// was obtained; their difference is the lifetime RefreshMargin uses.
	Expires time.Time `json:"expires,omitzero"`
	Issued  time.Time `json:"issued,omitzero"`
}

// String never shows a token.
func (c Credential) String() string { return "account.Credential{…}" }

// GoString never shows a token.
func (c Credential) GoString() string { return c.String() }

// ErrUndecryptable is the plain answer when a stored credential cannot be
// opened with the configured key.
var ErrUndecryptable = errors.New("stored credentials cannot be decrypted with server.secret_key (the key changed or is wrong): sign the account in again with `ccload login`")

// sealVersion prefixes every sealed blob, so the format can change later.
const sealVersion = 1

// Seal encrypts c with AES-256-GCM under key (server.secret_key's 32
// bytes). The channel and account names are the additional data, so a
// blob copied to another account's row does not open.
func Seal(key []byte, channel, account string, c Credential) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	plain, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte{sealVersion}, nonce...)
	return gcm.Seal(out, nonce, plain, aad(channel, account)), nil
}

// Open decrypts a blob made by Seal, or fails with ErrUndecryptable.
func Open(key []byte, channel, account string, blob []byte) (Credential, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return Credential{}, err
	}
	n := gcm.NonceSize()
	if len(blob) < 1+n || blob[0] != sealVersion {
		return Credential{}, ErrUndecryptable
	}
	plain, err := gcm.Open(nil, blob[1:1+n], blob[1+n:], aad(channel, account))
	if err != nil {
		return Credential{}, ErrUndecryptable
	}
	var c Credential
	if err := json.Unmarshal(plain, &c); err != nil {
		return Credential{}, ErrUndecryptable
	}
	return c, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("server.secret_key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func aad(channel, account string) []byte {
	return []byte("ccload account\x00" + channel + "\x00" + account)
}

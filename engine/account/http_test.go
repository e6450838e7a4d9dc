package account_test

import (
	"io"
	"net/http"
	"net/url"
)

func httpPostForm(u string, v url.Values) (string, error) {
	resp, err := http.PostForm(u, v)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

package fakesmtp

import (
	"encoding/base64"
	"io"
	"mime/quotedprintable"
	"strings"
)

// decode undoes a Content-Transfer-Encoding.
func decode(cte string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r)
	}
	return r
}

// Package http is a small HTTP readiness check used by go-ftw's
// --wait-for-host flag. It supports the options go-ftw passes; the body
// JSON/XPath and header expectations are not implemented and make the check
// fail with a clear message instead of being silently ignored.
package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"regexp"
	"time"

	"wait4x.dev/v3/checker"
)

// Defaults used by go-ftw for its flag definitions.
const (
	DefaultConnectionTimeout     = 3 * time.Second
	DefaultInsecureSkipTLSVerify = false
	DefaultNoRedirect            = false
)

// Option configures the checker.
type Option func(*httpChecker)

type httpChecker struct {
	address    string
	status     int
	bodyRegex  string
	bodyJSON   string
	bodyXPath  string
	header     string
	timeout    time.Duration
	insecure   bool
	noRedirect bool
}

// New returns a checker for address.
func New(address string, opts ...Option) checker.Checker {
	c := &httpChecker{address: address, timeout: DefaultConnectionTimeout}
	for _, o := range opts {
		o(c)
	}
	return c
}

func WithExpectStatusCode(code int) Option    { return func(c *httpChecker) { c.status = code } }
func WithExpectBodyRegex(re string) Option    { return func(c *httpChecker) { c.bodyRegex = re } }
func WithExpectBodyJSON(expr string) Option   { return func(c *httpChecker) { c.bodyJSON = expr } }
func WithExpectBodyXPath(expr string) Option  { return func(c *httpChecker) { c.bodyXPath = expr } }
func WithExpectHeader(expr string) Option     { return func(c *httpChecker) { c.header = expr } }
func WithTimeout(d time.Duration) Option      { return func(c *httpChecker) { c.timeout = d } }
func WithInsecureSkipTLSVerify(b bool) Option { return func(c *httpChecker) { c.insecure = b } }
func WithNoRedirect(b bool) Option            { return func(c *httpChecker) { c.noRedirect = b } }

func (c *httpChecker) Identity() (string, error) { return c.address, nil }

// Check performs one GET and compares status and body with what was asked.
func (c *httpChecker) Check(ctx context.Context) error {
	if c.bodyJSON != "" || c.bodyXPath != "" || c.header != "" {
		return errors.New("wait4x stub: JSON, XPath and header expectations are not supported in this build")
	}
	client := &nethttp.Client{
		Timeout:   c.timeout,
		Transport: &nethttp.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: c.insecure}},
	}
	if c.noRedirect {
		client.CheckRedirect = func(*nethttp.Request, []*nethttp.Request) error { return nethttp.ErrUseLastResponse }
	}
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodGet, c.address, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if c.status != 0 && resp.StatusCode != c.status {
		return fmt.Errorf("status %d, want %d", resp.StatusCode, c.status)
	}
	if c.bodyRegex != "" {
		re, err := regexp.Compile(c.bodyRegex)
		if err != nil {
			return err
		}
		if !re.Match(body) {
			return errors.New("body does not match the expected pattern")
		}
	}
	return nil
}

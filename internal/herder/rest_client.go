package herder

import "net/http"

// SetRESTClient sets the client for requests to other workers (the internal task-config request to the
// leader): https listeners need the worker's REST TLS settings. Before Start.
func (d *Distributed) SetRESTClient(c *http.Client) { d.httpClient = c }

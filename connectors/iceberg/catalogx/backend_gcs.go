//go:build !no_iceberg_gcs

package catalogx

import _ "github.com/apache/iceberg-go/io/gocloud/gcs" // gs FileIO

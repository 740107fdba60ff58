//go:build !no_iceberg_gcs

package iceberg

import _ "github.com/apache/iceberg-go/io/gocloud/gcs" // gs FileIO

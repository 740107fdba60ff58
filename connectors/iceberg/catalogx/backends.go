package catalogx

// FileIO schemes and catalogs beyond those catalog.go links (local files, the SQL and the REST catalogs), as the
// JVM sink's runtime bundles them: S3 always; Google Cloud Storage (gs://), Azure (abfs://, wasb://), Glue and
// Hive unless a build leaves them out with the tags no_iceberg_gcs, no_iceberg_azure, no_iceberg_glue,
// no_iceberg_hive. Each pulls in a cloud SDK (the GCS client alone brings gRPC, xDS and OpenTelemetry) that a
// build for other stores carries as dead weight.

import _ "github.com/apache/iceberg-go/io/gocloud/s3" // s3, s3a, s3n FileIO

package icetable

// WriteDataFiles is writeDataFiles, for the write benchmark.
var WriteDataFiles = writeDataFiles

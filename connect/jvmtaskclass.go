package connect

// JVMTaskClasser is implemented by sink connectors that mirror a JVM connector. TaskClass is the JVM task class
// name (e.g. org.apache.kafka.connect.file.FileStreamSinkTask) that the runtime writes as `task.class` in task
// configs, so that JVM Connect workers sharing the cluster, or taking it back, can load the tasks.
type JVMTaskClasser interface {
	TaskClass() string
}

{{- define "connectd.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "connectd.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "connectd.labels" -}}
{{ include "connectd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "connectd.scheme" -}}{{ if .Values.tls.enabled }}https{{ else }}http{{ end }}{{- end -}}

{{/* the worker properties file */}}
{{- define "connectd.workerProperties" -}}
bootstrap.servers={{ .Values.kafka.bootstrapServers }}
group.id={{ .Values.groupId }}
config.storage.topic={{ .Values.topics.config }}
offset.storage.topic={{ .Values.topics.offset }}
status.storage.topic={{ .Values.topics.status }}
config.storage.replication.factor={{ .Values.kafka.replicationFactor }}
offset.storage.replication.factor={{ .Values.kafka.replicationFactor }}
status.storage.replication.factor={{ .Values.kafka.replicationFactor }}
listeners={{ include "connectd.scheme" . }}://0.0.0.0:8083
connectd.scratch.dir=/data/scratch
config.providers=directory,env
config.providers.directory.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
config.providers.directory.param.allowed.paths=/etc/connectd/secrets
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
{{- if .Values.tls.enabled }}
rest.advertised.listener=https
listeners.https.ssl.keystore.location=/etc/connectd/tls/{{ .Values.tls.keystoreKey }}
listeners.https.ssl.keystore.type={{ .Values.tls.keystoreType }}
listeners.https.ssl.truststore.location=/etc/connectd/tls/{{ .Values.tls.truststoreKey }}
listeners.https.ssl.truststore.type={{ .Values.tls.truststoreType }}
{{- if ne .Values.tls.keystoreType "PEM" }}
listeners.https.ssl.keystore.password=${directory:/etc/connectd/secrets/tls-password:{{ .Values.tls.passwordSecret.key }}}
{{- end }}
{{- if ne .Values.tls.truststoreType "PEM" }}
listeners.https.ssl.truststore.password=${directory:/etc/connectd/secrets/tls-password:{{ .Values.tls.passwordSecret.key }}}
{{- end }}
listeners.https.ssl.client.auth={{ .Values.tls.clientAuth }}
listeners.https.ssl.endpoint.identification.algorithm={{ if .Values.tls.verifyWorkerHostname }}https{{ end }}
{{- end }}
{{- if .Values.basicAuth.enabled }}
rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
java.security.auth.login.config=/etc/connectd/config/connect_jaas.conf
{{- end }}
{{- range $k, $v := .Values.workerProperties }}
{{ $k }}={{ $v }}
{{- end }}
{{- end -}}

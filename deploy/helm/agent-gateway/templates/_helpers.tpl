{{/* Names and labels shared by every object of the release. */}}
{{- define "gw.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gw.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gw.labels" -}}
app.kubernetes.io/name: {{ include "gw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one role (api, worker). */}}
{{- define "gw.selector" -}}
app.kubernetes.io/name: {{ include "gw.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "gw.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "gw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gw.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Where the Secret's keys are mounted; the gateway reads them through *_FILE. */}}
{{- define "gw.secretDir" -}}/var/run/secrets/agent-gateway{{- end -}}

{{/* The environment every gateway container shares (secrets by file, never by value). */}}
{{- define "gw.env" -}}
{{- range $secret := list "GATEWAY_MASTER_KEY" "DATABASE_URL" "GATEWAY_ADMIN_PASSWORD" }}
{{- if or (hasKey $.Values.env $secret) (hasKey $.Values.env (printf "%s_FILE" $secret)) }}
{{- fail (printf "env.%s: secrets come from existingSecret (a Secret you create), never from values" $secret) }}
{{- end }}
{{- end }}
- name: NODE_ENV
  value: production
- name: PUBLIC_URL
  value: {{ .Values.publicUrl | quote }}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
# The registration Job registers the search attributes; the pods only check them.
- name: TEMPORAL_REGISTER_SEARCH_ATTRIBUTES
  value: {{ ternary "false" "true" .Values.temporal.registerSearchAttributes.enabled | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: LOG_FORMAT
  value: json
- name: GATEWAY_MASTER_KEY_FILE
  value: {{ include "gw.secretDir" . }}/master-key
- name: DATABASE_URL_FILE
  value: {{ include "gw.secretDir" . }}/database-url
{{- if .Values.existingSecret.keys.adminPassword }}
- name: GATEWAY_ADMIN_PASSWORD_FILE
  value: {{ include "gw.secretDir" . }}/admin-password
{{- end }}
- name: METRICS_PORT
  value: {{ ternary .Values.metrics.port 0 .Values.metrics.enabled | quote }}
- name: METRICS_HOST
  value: "0.0.0.0"
{{- if .Values.tracing.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .Values.tracing.otlpEndpoint | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ .Values.tracing.serviceName | quote }}
- name: OTEL_PROPAGATE_UPSTREAM
  value: {{ .Values.tracing.propagateUpstream | quote }}
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{/* The Secret as files (mode 0400), and a writable /tmp on the read-only root filesystem. */}}
{{- define "gw.volumes" -}}
- name: secrets
  secret:
    secretName: {{ .Values.existingSecret.name }}
    defaultMode: 0400
    items:
      - key: {{ .Values.existingSecret.keys.masterKey }}
        path: master-key
      - key: {{ .Values.existingSecret.keys.databaseUrl }}
        path: database-url
      {{- if .Values.existingSecret.keys.adminPassword }}
      - key: {{ .Values.existingSecret.keys.adminPassword }}
        path: admin-password
      {{- end }}
- name: tmp
  emptyDir: {}
{{- end -}}

{{- define "gw.volumeMounts" -}}
- name: secrets
  mountPath: {{ include "gw.secretDir" . }}
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- end -}}

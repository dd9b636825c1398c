// A valid Slack-like service document in the bare-alias form authors write.
// Tests clone it and break exactly one thing.

export type Doc = Record<string, any>;

export function validDoc(): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 'Slack', version: '1.0.0', key: 'slack', category: 'Chat', description: 'Team chat' },
    servers: [{ url: 'https://slack.com/api/' }],
    security: [{ oauth: ['channels:read'] }],
    components: {
      securitySchemes: {
        oauth: {
          type: 'oauth2',
          provider: 'slack',
          flows: {
            authorizationCode: {
              authorizationUrl: 'https://slack.com/oauth/v2/authorize',
              tokenUrl: 'https://slack.com/api/oauth.v2.access',
              scopes: { 'chat:write': 'Post messages', 'channels:read': 'Read channels' },
            },
          },
        },
        token: { type: 'apiKey', in: 'header', name: 'Authorization', prefix: 'Bearer ', default_secret_name: 'SLACK_TOKEN' },
      },
      parameters: {
        File: { name: 'file', in: 'path', required: true, schema: { type: 'string' }, description: 'File id' },
      },
    },
    paths: {
      '/chat.postMessage': {
        post: {
          operationId: 'chat.postMessage',
          summary: 'Post to {channel}[ in thread {thread_ts}]',
          risk: 'write',
          scope_param: 'channel',
          security: [{ oauth: ['chat:write'] }],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['channel', 'text'],
                  properties: { channel: { type: 'string' }, text: { type: 'string' }, thread_ts: { type: 'string' } },
                },
              },
            },
          },
          disclose: [{ label: 'Message', filter: '.body.text', max_chars: 200 }],
          redact: ['body.token'],
        },
      },
      '/conversations/{channel}': {
        parameters: [
          {
            name: 'channel',
            in: 'path',
            required: true,
            schema: { type: 'string' },
            resolve: { get: '/conversations/{channel}', pick: 'channel.name' },
          },
        ],
        get: {
          operationId: 'conversations.info',
          summary: 'Look up channel {channel}',
          parameters: [{ name: 'include_locale', in: 'query', schema: { type: 'boolean', default: false } }],
        },
        delete: { operationId: 'conversations.archive', summary: 'Archive {channel}' },
      },
      '/files/{file}': {
        get: {
          operationId: 'files.download',
          summary: 'Download {file}',
          description: 'Fetch the raw bytes of an uploaded file',
          response_type: 'binary',
          security: [],
          parameters: [{ $ref: '#/components/parameters/File' }],
        },
      },
    },
  };
}

/** A recorder with the slice of the pino API the loader uses. */
export function memoryLogger(): { lines: { level: string; obj: object; msg: string }[]; error(obj: object, msg: string): void; info(obj: object, msg: string): void } {
  const lines: { level: string; obj: object; msg: string }[] = [];
  return {
    lines,
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
  };
}

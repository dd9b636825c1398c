// A payments service for rule condition and budget tests: its refund takes a numeric amount.
/** A payments service whose refund takes a numeric amount in its body. */
export function paymentsDoc(baseUrl: string) {
  return {
    openapi: '3.1.0',
    info: { title: 'Payments', key: 'pay', version: '1' },
    servers: [{ url: baseUrl }],
    components: { securitySchemes: { api_key: { type: 'apiKey', in: 'header', name: 'X-Api-Key', default_secret_name: 'PAY_KEY' } } },
    security: [{ api_key: [] }],
    paths: {
      '/refunds': {
        post: {
          operationId: 'create_refund',
          summary: 'Refund {amount}',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', required: ['amount'], properties: { amount: { type: 'number' }, note: { type: 'string' } }, additionalProperties: false } } },
          },
          responses: { '201': { description: 'created' } },
        },
      },
    },
  };
}

/**
 * A JSON Schema of the GitLab SAST report, schema line 15.x, reproduced from the published
 * facts (the original lives on gitlab.com only): required top-level fields, the scan object, and
 * each vulnerability's id, identifiers, location and `details` (named fields of GitLab's detail
 * types: `text`, `code`, …). Extra fields are allowed, as in GitLab's.
 */
export const SAST_REPORT_JSON_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'GitLab SAST report (15.x)',
  type: 'object',
  required: ['version', 'scan', 'vulnerabilities'],
  properties: {
    version: { type: 'string', pattern: '^15\\.\\d+\\.\\d+$' },
    schema: { type: 'string', format: 'uri' },
    scan: {
      type: 'object',
      required: ['analyzer', 'scanner', 'type', 'start_time', 'end_time', 'status'],
      properties: {
        analyzer: { $ref: '#/definitions/tool' },
        scanner: { $ref: '#/definitions/tool' },
        type: { const: 'sast' },
        start_time: { $ref: '#/definitions/time' },
        end_time: { $ref: '#/definitions/time' },
        status: { enum: ['success', 'failure'] },
        messages: {
          type: 'array',
          items: {
            type: 'object',
            required: ['level', 'value'],
            properties: { level: { enum: ['info', 'warning', 'fatal', 'error'] }, value: { type: 'string' } },
          },
        },
      },
    },
    vulnerabilities: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'identifiers', 'location'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          name: { type: 'string', maxLength: 255 },
          description: { type: 'string', maxLength: 1048576 },
          severity: { enum: ['Info', 'Unknown', 'Low', 'Medium', 'High', 'Critical'] },
          solution: { type: 'string', maxLength: 7000 },
          identifiers: {
            type: 'array',
            minItems: 1,
            items: {
              type: 'object',
              required: ['type', 'name', 'value'],
              properties: {
                type: { type: 'string', minLength: 1 },
                name: { type: 'string', minLength: 1 },
                value: { type: 'string', minLength: 1 },
                url: { type: 'string', format: 'uri' },
              },
            },
          },
          links: {
            type: 'array',
            items: {
              type: 'object',
              required: ['url'],
              properties: { url: { type: 'string', format: 'uri' }, name: { type: 'string' } },
            },
          },
          location: {
            type: 'object',
            required: ['file', 'start_line', 'end_line'],
            properties: {
              file: { type: 'string', minLength: 1 },
              start_line: { type: 'integer', minimum: 1 },
              end_line: { type: 'integer', minimum: 1 },
              class: { type: 'string' },
              method: { type: 'string' },
            },
          },
          details: { type: 'object', additionalProperties: { $ref: '#/definitions/named_detail' } },
        },
      },
    },
    remediations: { type: 'array' },
  },
  definitions: {
    tool: {
      type: 'object',
      required: ['id', 'name', 'version', 'vendor'],
      properties: {
        id: { type: 'string', minLength: 1 },
        name: { type: 'string', minLength: 1 },
        version: { type: 'string', minLength: 1 },
        url: { type: 'string', format: 'uri' },
        vendor: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string', minLength: 1 } },
        },
      },
    },
    time: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$' },
    /**
     * An entry of `details`: a named field (`name` required) of one of the detail types, each
     * with the fields its type requires.
     */
    named_detail: {
      type: 'object',
      required: ['name', 'type'],
      properties: { name: { type: 'string', minLength: 1 }, description: { type: 'string' } },
      oneOf: [
        {
          required: ['value'],
          properties: { type: { enum: ['text', 'markdown', 'commit'] }, value: { type: 'string' } },
        },
        {
          required: ['value'],
          properties: { type: { const: 'code' }, value: { type: 'string' }, lang: { type: 'string' } },
        },
        {
          required: ['value'],
          properties: { type: { const: 'value' }, value: { type: ['string', 'number', 'boolean'] } },
        },
        {
          required: ['href'],
          properties: {
            type: { const: 'url' },
            href: { type: 'string', format: 'uri' },
            text: { type: 'string' },
          },
        },
        {
          properties: {
            type: { enum: ['named-list', 'list', 'table', 'diff', 'file-location', 'module-location'] },
          },
        },
      ],
    },
  },
} as const;

/**
 * The settings of a company's connection to each outside service: what may be shown (base URLs,
 * where tickets go), never secrets. Checked against the provider's schema when saved (unknown or
 * wrongly typed settings are refused) and stored as they were given (`integrations.settings`).
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const text = (description: string) => Type.String({ minLength: 1, maxLength: 2048, description });

/** tracker_a: the GraphQL endpoint, how issue links are made, and where new tickets go. */
export const TrackerASettingsSchema = Type.Object(
  {
    baseUrl: Type.Optional(text('the GraphQL endpoint (default https://api.linear.app/graphql)')),
    workspaceUrlKey: Type.Optional(text("the first path segment of the workspace's issue URLs")),
    appUrl: Type.Optional(text('the origin of issue URLs')),
    destination: Type.Optional(
      Type.Object(
        {
          teamId: text('the team new tickets are created in'),
          labelIds: Type.Optional(Type.Array(text('a label attached to new tickets'), { maxItems: 50 })),
          priority: Type.Optional(
            Type.Union(
              [Type.Literal(0), Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4)],
              {
                description: '0 none, 1 urgent, 2 high, 3 normal, 4 low; from the severity when absent',
              },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type TrackerASettings = Static<typeof TrackerASettingsSchema>;

/** tracker_b: one site (`site`, or `siteUrl`), the OAuth gateway, and where new tickets go. */
export const TrackerBSettingsSchema = Type.Object(
  {
    siteUrl: Type.Optional(text('the site, when `site` is not given')),
    baseUrl: Type.Optional(text('the gateway that OAuth tokens are sent to')),
    destination: Type.Optional(
      Type.Object(
        {
          projectKey: text('the project new tickets are created in'),
          issueType: Type.Optional(text('the issue type name (default Bug)')),
        },
        { additionalProperties: false },
      ),
    ),
    default: Type.Optional(
      Type.Boolean({ description: "this site's destination wins when several sites have one" }),
    ),
  },
  { additionalProperties: false },
);
export type TrackerBSettings = Static<typeof TrackerBSettingsSchema>;

/** sourcehost: where the git and REST endpoints are and how repositories are listed. */
export const SourcehostSettingsSchema = Type.Object(
  {
    baseUrl: Type.Optional(text('the git endpoint')),
    apiBaseUrl: Type.Optional(text('the REST API (default baseUrl)')),
    repositoryListing: Type.Optional(
      Type.Union([Type.Literal('installation'), Type.Literal('user')], {
        description: '`installation` (default) or `user`',
      }),
    ),
    accountName: Type.Optional(text('the account the token belongs to (shown in the audit log)')),
  },
  { additionalProperties: false },
);
export type SourcehostSettings = Static<typeof SourcehostSettingsSchema>;

/** The services a company can connect to. */
export const INTEGRATION_PROVIDERS = ['tracker_a', 'tracker_b', 'sourcehost'] as const;
export type IntegrationProvider = (typeof INTEGRATION_PROVIDERS)[number];

/** The settings schema of each provider. */
export const INTEGRATION_SETTINGS_SCHEMAS = {
  tracker_a: TrackerASettingsSchema,
  tracker_b: TrackerBSettingsSchema,
  sourcehost: SourcehostSettingsSchema,
} satisfies Record<IntegrationProvider, TSchema>;
/** The settings of one provider. */
export type IntegrationSettingsOf<P extends IntegrationProvider> = Static<
  (typeof INTEGRATION_SETTINGS_SCHEMAS)[P]
>;
/** The settings of any provider (the stored column). */
export type IntegrationSettings = IntegrationSettingsOf<IntegrationProvider>;

/** A setting that does not fit the provider's schema: its dotted path and what is wrong. */
export interface SettingsProblem {
  field: string;
  message: string;
}

/**
 * The settings as `provider`'s, or the first problem with them: an unknown setting, a missing
 * or wrongly typed one.
 */
export function checkIntegrationSettings<P extends IntegrationProvider>(
  provider: P,
  value: unknown,
): { settings: IntegrationSettingsOf<P> } | { problem: SettingsProblem } {
  const schema: (typeof INTEGRATION_SETTINGS_SCHEMAS)[P] = INTEGRATION_SETTINGS_SCHEMAS[provider];
  if (Value.Check(schema, value)) return { settings: value };
  const [first] = Value.Errors(schema, value);
  const path = first ? first.path.split('/').filter(Boolean).join('.') : '';
  return {
    problem: {
      field: path === '' ? 'settings' : `settings.${path}`,
      message: first?.message ?? 'does not match the schema',
    },
  };
}

import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';

/** ScannerWorkspace (extension, ADR 0018): a workspace of the organization as the listing shows it. */
export const ScannerWorkspaceSchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    prefix: Type.String({
      description: 'Path within the source repository, without leading or trailing slash; empty: the root.',
    }),
    repository: Nullable(
      Type.String({
        description: '`owner/name` of the linked source-host repository; null: an upload-only workspace.',
      }),
    ),
    active: Type.Boolean({
      description: 'False once the workspace is unlinked: it takes no new scans, its scans stay listed.',
    }),
    createdAt: DateTimeSchema,
  },
  { $id: 'ScannerWorkspace' },
);
export type ScannerWorkspace = Static<typeof ScannerWorkspaceSchema>;

export const ListWorkspacesQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    next: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'The `nextValue` of the previous page.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListWorkspacesQuery = Static<typeof ListWorkspacesQuerySchema>;

/** ScannerWorkspaceList (extension): the organization's workspaces, newest first, and the next page's cursor. */
export const ScannerWorkspaceListSchema = Type.Object(
  {
    workspaces: Type.Array(ref(ScannerWorkspaceSchema)),
    nextValue: Nullable(Type.String({ description: 'Pass as `next` for the next page; null: no more.' })),
  },
  { $id: 'ScannerWorkspaceList' },
);
export type ScannerWorkspaceList = Static<typeof ScannerWorkspaceListSchema>;

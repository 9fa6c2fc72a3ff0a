/**
 * Prints the SQL that installs the finding bodies' view, refresh function and triggers, generated
 * from src/platform/findings/finding-bodies.source.ts: the content of a migration after a change
 * of the shared part of a finding's payload (`npm run db:finding-bodies > src/db/migrations/NNNN_….sql`).
 */
import { findingBodiesSql } from '../src/platform/findings/finding-bodies.source.ts';

process.stdout.write(findingBodiesSql());

/**
 * @module account/settings
 * What an owner decides for the whole account (one row), and the deployment's public origin as
 * last seen by start_workflow or the sign-in: webhook payloads link to the owner page with it,
 * and a webhook delivery has no request to read an origin from.
 */
import type { Sql } from "../storage/sql";

/** What an owner decides for the whole account. */
export interface AccountSettings {
  /** Whether start_workflow gives new workflows a share link (default true); links can always be made later. */
  share_new_workflows: boolean;
}

export class SettingsStore {
  constructor(private readonly sql: Sql) {}

  get(): AccountSettings {
    return { share_new_workflows: this.stored().share_new_workflows };
  }

  update(settings: AccountSettings): AccountSettings {
    this.sql`INSERT INTO settings (id, share_new_workflows) VALUES (1, ${settings.share_new_workflows ? 1 : 0})
      ON CONFLICT (id) DO UPDATE SET share_new_workflows = excluded.share_new_workflows`;
    return this.get();
  }

  /** The origin owner links are built from, or null before any was seen. */
  origin(): string | null {
    return this.stored().origin;
  }

  /** Notes the origin the caller saw; written only when it changes. */
  recordOrigin(origin: string): void {
    if (this.stored().origin === origin) return;
    this.sql`INSERT INTO settings (id, origin) VALUES (1, ${origin}) ON CONFLICT (id) DO UPDATE SET origin = excluded.origin`;
  }

  private stored(): AccountSettings & { origin: string | null } {
    const row = this.sql<{ share_new_workflows: number; origin: string | null }>`
      SELECT share_new_workflows, origin FROM settings WHERE id = 1`[0];
    return { share_new_workflows: (row?.share_new_workflows ?? 1) === 1, origin: row?.origin ?? null };
  }
}

import type { RelayClient } from '../../client/relay-client.js';
import type { ToolCatalogEntry } from '../../shared/tool-catalog.js';

const maxCachedCatalogs = 1_000;

/**
 * The tool catalogs of the runs the inbox shows. A run keeps the catalog it snapshotted, so each is read from
 * history once (the live list asks every second); the oldest read goes first past {@link maxCachedCatalogs}.
 */
export class RunCatalogs {
  private readonly catalogs = new Map<string, ToolCatalogEntry[]>();

  constructor(private readonly client: RelayClient) {}

  async of(runId: string, tenantId: string): Promise<ToolCatalogEntry[]> {
    const key = `${tenantId}/${runId}`;
    const known = this.catalogs.get(key);
    if (known) return known;
    const catalog = await this.client.toolCatalog(runId, { tenantId });
    // A run that has not recorded its catalog yet is asked again next time.
    if (catalog.length === 0) return catalog;
    if (this.catalogs.size >= maxCachedCatalogs) this.catalogs.delete(this.catalogs.keys().next().value ?? '');
    this.catalogs.set(key, catalog);
    return catalog;
  }
}

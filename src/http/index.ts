export { createApi } from './create-api.js';
export type { ApiEnv, CreateApiOptions } from './create-api.js';
export { startApiServer } from './start-api-server.js';
export type { ApiServer, StartApiServerOptions } from './start-api-server.js';
export { loadApiKeys } from './api-keys.js';
export type { ApiKeyTenant, ApiKeyTenants, LoadApiKeysOptions } from './api-keys.js';
export type { Problem } from './http-error.js';

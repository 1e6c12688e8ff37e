import { demoModelId } from '../demo/demo-model.js';
import { providersFromEnv } from '../model/providers/index.js';
import { envSetting } from './env-setting.js';

/** The model a run uses and a sentence saying where it comes from. */
export interface ResolvedModel {
  modelId: string;
  isDemo: boolean;
  description: string;
}

/** The model used when a provider's key is configured and no model is named. */
const defaultModels: Readonly<Record<string, string>> = {
  openai: 'openai:gpt-4.1-mini',
  anthropic: 'anthropic:claude-sonnet-4-5',
};

/**
 * `--model`, else RELAY_E_MODEL, else the default model of the first configured provider that has one, else the
 * scripted demo model; the description says plainly when no LLM is called and which providers are configured.
 */
export function resolveModel(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): ResolvedModel {
  const configured = Object.keys(providersFromEnv(env));
  const fromEnv = envSetting(env, 'RELAY_E_MODEL');
  const named = flag ?? fromEnv;
  const modelId = named ?? configured.map((provider) => defaultModels[provider]).find((model) => model !== undefined);
  if (modelId !== undefined && modelId !== demoModelId) {
    // A named model is the workers' to serve (a config's scripted model, say): this process's keys say nothing of it.
    const source =
      flag !== undefined
        ? 'from --model'
        : fromEnv !== undefined
          ? 'from RELAY_E_MODEL'
          : 'default of the configured provider; --model or RELAY_E_MODEL to change';
    return { modelId, isDemo: false, description: `${modelId} (${source})` };
  }
  const hint =
    configured.length > 0
      ? `providers ${list(configured)} are configured: pass --model or set RELAY_E_MODEL (e.g. ${configured[0]}:<model>) to use one`
      : 'set OPENAI_API_KEY, ANTHROPIC_API_KEY or RELAY_E_COMPATIBLE_BASE_URL (with RELAY_E_MODEL) to use an LLM';
  return {
    modelId: demoModelId,
    isDemo: true,
    description: `${demoModelId}: the SCRIPTED DEMO model, no LLM is called (${hint})`,
  };
}

function list(names: readonly string[]): string {
  return names.length > 0 ? names.join(', ') : 'none';
}

import { demoModelId } from '../demo/demo-model.js';
import { providersFromEnv } from '../model/providers/index.js';

/** The model a run uses and a sentence saying where it comes from. */
export interface ResolvedModel {
  modelId: string;
  isDemo: boolean;
  description: string;
}

/**
 * `--model`, else RELAY_E_MODEL, else the scripted demo model; the description says plainly when no LLM is
 * called and which providers the environment configures.
 */
export function resolveModel(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): ResolvedModel {
  const configured = Object.keys(providersFromEnv(env));
  const modelId = flag ?? (env['RELAY_E_MODEL'] || undefined);
  if (modelId !== undefined && modelId !== demoModelId) {
    return { modelId, isDemo: false, description: `${modelId} (providers configured here: ${list(configured)})` };
  }
  const hint =
    configured.length > 0
      ? `providers ${list(configured)} are configured: pass --model or set RELAY_E_MODEL (e.g. ${configured[0]}:<model>) to use one`
      : 'set OPENAI_API_KEY, ANTHROPIC_API_KEY or RELAY_E_COMPATIBLE_BASE_URL and RELAY_E_MODEL to use an LLM';
  return {
    modelId: demoModelId,
    isDemo: true,
    description: `${demoModelId}: the SCRIPTED DEMO model, no LLM is called (${hint})`,
  };
}

function list(names: readonly string[]): string {
  return names.length > 0 ? names.join(', ') : 'none';
}

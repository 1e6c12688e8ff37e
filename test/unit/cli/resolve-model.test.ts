import { describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/cli/resolve-model.js';

describe('resolveModel', () => {
  it('uses the scripted demo model, labelled as such, when no provider is configured', () => {
    const model = resolveModel(undefined, {});
    expect(model).toMatchObject({ modelId: 'scripted:demo', isDemo: true });
    expect(model.description).toContain('SCRIPTED DEMO');
  });

  it("uses a configured provider's default model when none is named", () => {
    expect(resolveModel(undefined, { OPENAI_API_KEY: 'sk-test' })).toMatchObject({
      modelId: 'openai:gpt-4.1-mini',
      isDemo: false,
    });
    expect(resolveModel(undefined, { ANTHROPIC_API_KEY: 'sk-ant' }).modelId).toBe('anthropic:claude-sonnet-4-5');
  });

  it('prefers --model over RELAY_E_MODEL over the default, and needs a name for an OpenAI-compatible server', () => {
    const env = { OPENAI_API_KEY: 'sk-test', RELAY_E_MODEL: 'openai:gpt-4.1' };
    expect(resolveModel('anthropic:claude-x', env).modelId).toBe('anthropic:claude-x');
    expect(resolveModel(undefined, env).modelId).toBe('openai:gpt-4.1');
    // Where the name came from, not this process's providers: the workers serve it (a config's scripted model, say).
    expect(resolveModel('scripted:orders', {}).description).toBe('scripted:orders (from --model)');
    expect(resolveModel(undefined, { RELAY_E_MODEL: 'scripted:orders' }).description).toBe(
      'scripted:orders (from RELAY_E_MODEL)',
    );
    expect(resolveModel(undefined, { RELAY_E_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1' })).toMatchObject({
      modelId: 'scripted:demo',
      isDemo: true,
    });
  });
});

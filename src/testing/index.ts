export { scriptedModel } from './scripted-model.js';
export type { ScriptedTurn, ScriptedTurnFunction } from './scripted-model.js';

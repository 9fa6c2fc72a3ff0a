import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig: listen address and metrics', () => {
  it('listens on 127.0.0.1 unless HOST says otherwise', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '' }).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('serves metrics to no one unless a token or a metrics port is set', () => {
    expect(loadConfig({}).metrics).toEqual({ token: null, port: null });
    const token = 'a'.repeat(16);
    expect(loadConfig({ VIGIL_METRICS_TOKEN: token, VIGIL_METRICS_PORT: '9464' }).metrics).toEqual({
      token,
      port: 9464,
    });
  });

  it('refuses a short metrics token and a metrics port that is not one', () => {
    expect(() => loadConfig({ VIGIL_METRICS_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ VIGIL_METRICS_TOKEN: 'has a space in it somewhere' })).toThrow(ConfigError);
    for (const port of ['0', '70000', 'x']) {
      expect(() => loadConfig({ VIGIL_METRICS_PORT: port }), port).toThrow(ConfigError);
    }
  });
});

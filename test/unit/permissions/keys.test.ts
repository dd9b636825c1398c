import { describe, expect, it } from 'vitest';
import {
  MISSING_ARG,
  PermissionKeyError,
  actionPermissionKey,
  approvalRisk,
  httpPermissionKey,
  parsePermissionKey,
  riskForHttpMethod,
} from '../../../core/permissions/keys.ts';

describe('actionPermissionKey', () => {
  it.each([
    ['no scope_param → whole action', undefined, {}, undefined, 'slack:post:*'],
    ['scope_param * → whole action', '*', { channel: 'x' }, undefined, 'slack:post:*'],
    ['value from params', 'channel', { channel: 'C123' }, undefined, 'slack:post:C123'],
    ['value from top-level body', 'channel', {}, { channel: 'C9' }, 'slack:post:C9'],
    ['params win over body', 'channel', { channel: 'P' }, { channel: 'B' }, 'slack:post:P'],
    ['number value', 'id', { id: 42 }, undefined, 'slack:post:42'],
    ['boolean value', 'flag', { flag: false }, undefined, 'slack:post:false'],
    ['absent → sentinel, never *', 'channel', {}, undefined, `slack:post:${MISSING_ARG}`],
    ['null → sentinel', 'channel', { channel: null }, { channel: null }, `slack:post:${MISSING_ARG}`],
    ['empty string → sentinel', 'channel', { channel: '' }, undefined, `slack:post:${MISSING_ARG}`],
    ['nested body values are not looked up', 'channel', {}, { msg: { channel: 'x' } }, `slack:post:${MISSING_ARG}`],
    ['array body is ignored', 'channel', {}, [{ channel: 'x' }], `slack:post:${MISSING_ARG}`],
    ['prototype names are not values', 'constructor', {}, {}, `slack:post:${MISSING_ARG}`],
    ['literal * is escaped', 'channel', { channel: '*' }, undefined, 'slack:post:%2A'],
    ['colon is escaped', 'channel', { channel: 'a:b' }, undefined, 'slack:post:a%3Ab'],
    ['percent is escaped first', 'channel', { channel: '%2A' }, undefined, 'slack:post:%252A'],
    ['sentinel text is escaped', 'channel', { channel: '<missing>' }, undefined, 'slack:post:%3Cmissing%3E'],
    ['slash is kept', 'path', { path: 'a/b' }, undefined, 'slack:post:a/b'],
  ])('%s', (_name, scope, params, body, expected) => {
    expect(actionPermissionKey('slack', 'post', scope, params, body)).toBe(expected);
  });

  it.each(['', 'a:b', 'a*', 'a b'])('rejects bad service/action name %j', (name) => {
    expect(() => actionPermissionKey(name, 'post', undefined, {})).toThrow(PermissionKeyError);
    expect(() => actionPermissionKey('slack', name, undefined, {})).toThrow(PermissionKeyError);
  });
});

describe('httpPermissionKey', () => {
  it.each([
    ['get', 'https://API.Example.com/v1/users?x=1#f', 'http:GET:api.example.com/v1/users'],
    ['POST', 'https://api.example.com:8443/a/b', 'http:POST:api.example.com:8443/a/b'],
    ['post', 'https://api.example.com:443/a', 'http:POST:api.example.com/a'],
    ['GET', 'http://api.example.com:80/a', 'http:GET:api.example.com/a'],
    ['GET', 'https://api.example.com', 'http:GET:api.example.com/'],
    ['GET', 'https://user:pw@api.example.com/a', 'http:GET:api.example.com/a'],
    ['GET', 'https://api.example.com/a/../b', 'http:GET:api.example.com/b'],
    ['GET', 'https://api.example.com/a*b', 'http:GET:api.example.com/a%2Ab'],
    ['GET', 'https://api.example.com/a%2fb', 'http:GET:api.example.com/a%2Fb'],
    ['DELETE', 'http://[::1]:8080/x', 'http:DELETE:[::1]:8080/x'],
  ])('%s %s', (method, url, expected) => {
    expect(httpPermissionKey(method, url)).toBe(expected);
    expect(httpPermissionKey(method, new URL(url))).toBe(expected);
  });

  it.each([
    ['ANY', 'https://h/x'],
    ['GE T', 'https://h/x'],
    ['', 'https://h/x'],
    ['GET', 'not a url'],
    ['GET', 'mailto:a@b.c'],
  ])('rejects %j %j', (method, url) => {
    expect(() => httpPermissionKey(method, url)).toThrow(PermissionKeyError);
  });
});

describe('parsePermissionKey', () => {
  it.each([
    ['slack:post:C1', { service: 'slack', action: 'post', arg: 'C1' }],
    ['http:GET:h:8080/a:b', { service: 'http', action: 'GET', arg: 'h:8080/a:b' }],
    ['svc:act:', { service: 'svc', action: 'act', arg: '' }],
  ])('%s', (key, expected) => {
    expect(parsePermissionKey(key)).toEqual(expected);
  });

  it.each(['', 'slack', 'slack:post', ':post:x', 'slack::x'])('rejects %j', (key) => {
    expect(parsePermissionKey(key)).toBeNull();
  });
});

describe('risk', () => {
  it.each([
    ['GET', 'read'],
    ['head', 'read'],
    ['OPTIONS', 'read'],
    ['DELETE', 'delete'],
    ['POST', 'write'],
    ['PUT', 'write'],
    ['PATCH', 'write'],
    ['PROPFIND', 'write'],
  ] as const)('%s → %s', (method, risk) => {
    expect(riskForHttpMethod(method)).toBe(risk);
  });

  it.each([
    ['read', 'low'],
    ['write', 'med'],
    ['delete', 'high'],
  ] as const)('%s → %s', (risk, approval) => {
    expect(approvalRisk(risk)).toBe(approval);
  });
});

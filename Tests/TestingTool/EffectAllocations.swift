import Effects
import Foundation

/// `tape-testing effect-allocations URI --channels N`: runs 10 s of noise through the plugin in
/// 256-frame periods, with parameter changes and bypass toggles every 20 periods, between the
/// allocation counter's begin and end hooks (see Tests/Support/audio-thread-mallocs.c, which
/// must be preloaded); prints `ran N periods`.
func effectAllocations(_ uri: String, channels: Int) throws {
  typealias Hook = @convention(c) () -> Void
  func hook(_ name: String) -> Hook? { dlsym(nil, name).map { unsafeBitCast($0, to: Hook.self) } }
  guard let begin = hook("tape_audio_thread_begin"), let end = hook("tape_audio_thread_end") else {
    throw EffectError.invalidConfiguration("the allocation counter is not preloaded")
  }
  let catalog = PluginCatalog.load()
  let plugin = try catalog.require(uri)
  let effect = try EffectProcessor(
    plugin: plugin, catalog: catalog, sampleRate: 48_000, channels: channels,
    maximumFrames: 256, values: plugin.defaultValues, bypassed: false, state: nil)
  let period = 256
  let buffer = UnsafeMutablePointer<Float>.allocate(capacity: period * channels)
  defer { buffer.deallocate() }
  // Other values: each continuous control a third of the way up its range.
  let other = UnsafeMutablePointer<Float>.allocate(capacity: max(1, plugin.controls.count))
  let defaults = UnsafeMutablePointer<Float>.allocate(capacity: max(1, plugin.controls.count))
  defer {
    other.deallocate()
    defaults.deallocate()
  }
  for (index, control) in plugin.controls.enumerated() {
    defaults[index] = control.defaultValue
    other[index] =
      control.kind == .continuous
      ? control.minimum + (control.maximum - control.minimum) / 3 : control.defaultValue
  }
  var seed: UInt32 = 1
  let periods = 48_000 * 10 / period
  begin()
  for index in 0..<periods {
    for sample in 0..<(period * channels) {
      seed = seed &* 1_664_525 &+ 1_013_904_223
      buffer[sample] = Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.5
    }
    if index % 20 == 0 { effect.setTargets(index % 40 == 0 ? other : defaults) }
    if index % 50 == 0 { effect.setBypassed(index % 100 == 50) }
    effect.process(buffer, frames: period)
  }
  end()
  acknowledge("ran \(periods) periods")
}

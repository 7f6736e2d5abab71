public import Effects
public import Timeline

extension ControlPort {
  /// `current` automation of this port after `edit`, its values read in the port's units and
  /// checked against its range (``/Effects/ControlPort/value(parsing:)``); nil when no point is
  /// left. A toggle,
  /// enumeration or integer port holds each value (its values are steps: a value between two
  /// is a setting nobody chose): its lanes are `hold` unless told otherwise, and `linear` is
  /// refused. `name` is how messages name the lane (`f1 gain`).
  ///
  /// ```swift
  /// let sweep = try port.automation(
  ///   nil, by: .set("2s:0,4s:-12", shapes: nil), name: "f1 gain", sampleRate: 48_000)
  /// ```
  public func automation(
    _ current: ParameterEnvelope?, by edit: EnvelopeEdit, name: String, sampleRate: Int
  ) throws(TimelineError) -> ParameterEnvelope? {
    var edit = edit
    if !canRamp {
      switch edit {
      case .set(let text, nil): edit = .set(text, shapes: AutomationShape.hold.rawValue)
      case .add(let text, nil): edit = .add(text, shapes: AutomationShape.hold.rawValue)
      default: break
      }
    }
    let edited = try ParameterEnvelope.edited(
      current, by: edit, name: name, sampleRate: sampleRate
    ) { (text: String) throws(TimelineError) -> Double in
      do {
        return Double(try value(parsing: text))
      } catch {
        throw .invalidAutomation("\(name): \(error)")
      }
    }
    if let edited, !canRamp, !edited.holdsOnly {
      throw .invalidAutomation(
        "\(name) is a\(kind == .integer ? "n" : "") \(kind.rawValue) port: its automation holds each value until the next point; use --shape hold (linear would pass through settings between the steps)"
      )
    }
    return edited
  }
}
